/**
 * $'…' escapes whose bytes depend on more than the text. With Read(./.env) denied in
 * bypassPermissions and a link to the workspace itself under a name (`ln -s . NAME`, allowed),
 * `cat $'…'/.en?` printed .env where the check and bash read the $'…' word as two names:
 * - `\c?` is DEL (0x7f) to bash (`\cX` is X's control character, `?` the exception); it was read
 *   as 0x1f, where nothing lies, so the glob matched nothing and the literal word was judged.
 * - `\u`/`\U` above ASCII are spelled in the locale bash has when it reads the line: in C (a line's
 *   `LC_ALL=C` on an earlier line sets it) bash leaves `\u00E9` as those six characters; in UTF-8,
 *   code points past U+10FFFF and surrogates become bytes that are not UTF-8 (f4 90 80 80 for
 *   `\U00110000`), read here as U+FFFD. They are now not literals (unknown: asks), as bytes that are not UTF-8 are.
 * The real service runs bash and cat.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeAnsiC } from '../src/bash/words.js';
import { BYPASS, bashServiceTests } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe("$'…' control and Unicode escapes", () => {
  it('print no .env through a link whose name the check read otherwise', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const made = await run(t, 'Bash', { command: "ln -s . $'\\x7f' && ln -s . '\\u00E9'" });
    expect(made.exec.status, made.text).toBe('succeeded');
    for (const bytes of [[0xf4, 0x90, 0x80, 0x80], [0xed, 0xa0, 0x80]]) fs.symlinkSync('.', Buffer.concat([Buffer.from(`${t.workspace}/`), Buffer.from(bytes)]));
    for (const command of ["cat $'\\c?'/.en?", "LC_ALL=C\ncat $'\\u00e9'/.en?", "cat $'\\U00110000'/.en?", "cat $'\\ud800'/.en?"]) {
      const r = await run(t, 'Bash', { command });
      expect(r.text, command).not.toContain('hunter2');
      expect(r.exec.status, command).toBe('denied');
    }
    // ASCII spelled with \u and control characters are known as before.
    const fine = await run(t, 'Bash', { command: "echo ok > $'\\u0041' && cat $'\\x41' $'\\U00000041'" });
    expect(fine.exec.status, fine.text).toBe('succeeded');
    expect(fine.text).toContain('ok');
  });

  it('decodes \\c as bash does', () => {
    expect(decodeAnsiC('\\c?')).toBe('\x7f');
    expect(decodeAnsiC('\\ca\\cA\\c[')).toBe('\x01\x01\x1b');
    expect(decodeAnsiC('\\c\\\\x')).toBe('\x1cx');
    expect(decodeAnsiC('\\c')).toBe('\\c');
    expect(decodeAnsiC('\\cé')).toBeUndefined();
    expect(decodeAnsiC('\\u00e9')).toBeUndefined();
    expect(decodeAnsiC('\\u0041\\U0000007e')).toBe('A~');
  });

  // `?` and `[…]` take a character of bash's locale: after `LC_ALL=C` on an earlier line, `??` is
  // é's two bytes, where the check's expansion (by characters) matched nothing and judged the word as written.
  it("leave a glob's ? and […] over a name past ASCII unknown", async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const made = await run(t, 'Bash', { command: 'ln -s . é && mkdir src && echo ok > src/a.ts' });
    expect(made.exec.status, made.text).toBe('succeeded');
    for (const command of ['LC_ALL=C\ncat ??/.en?', 'LC_ALL=C\ncat ?[^x]/.en?', 'export LC_ALL=C\ncat [^s][^s]/.en?']) {
      const r = await run(t, 'Bash', { command });
      expect(r.text, command).not.toContain('hunter2');
      expect(r.exec.status, command).toBe('denied');
    }
    // A star, and ? over ASCII names, are known as before.
    const fine = await run(t, 'Bash', { command: 'cat s?c/*.ts && ls -d *' });
    expect(fine.exec.status, fine.text).toBe('succeeded');
    expect(fine.text).toContain('ok');
  });
});
