/**
 * A line may change what bash's globs match before they are expanded: with Read(./.env) denied in
 * bypassPermissions, `shopt -s nocaseglob; cat .EN?` printed .env (bash matched .env case-blind,
 * the check's expansion found no `.EN?` name and judged the word as written); so did `shopt -s
 * dotglob` or `GLOBIGNORE=x` (which sets dotglob) on an earlier line, then `cat ?env`. A line
 * naming shopt (but a whole `shopt -s nullglob`/`failglob`) or GLOBIGNORE now takes each of its
 * globs for an expansion (unknown: asks). The real service runs bash and cat.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BYPASS, bashServiceTests } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('glob options a line sets', () => {
  it('print no .env through a glob the options make match it', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    fs.writeFileSync(path.join(t.workspace, 'a.md'), 'ok\n');
    for (const command of ['shopt -s nocaseglob; cat .EN?', 'shopt -s nocaseglob\ncat .EN?', 'shopt -s dotglob\ncat ?env', 'GLOBIGNORE=x\ncat ?env', 'shopt -s nullglob dotglob\ncat ?env', 'shopt -s nullglob; shopt -s dotglob; cat ?env']) {
      const r = await run(t, 'Bash', { command });
      expect(r.text, command).not.toContain('hunter2');
      expect(r.exec.status, command).toBe('denied');
    }
    // nullglob keeps what a glob matches: judged as before.
    const fine = await run(t, 'Bash', { command: 'shopt -s nullglob; cat *.md' });
    expect(fine.exec.status, fine.text).toBe('succeeded');
    expect(fine.text).toContain('ok');
  });
});
