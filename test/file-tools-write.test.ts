/**
 * Write against real files, through POST /execute: creating, overwriting
 * after a Read, Claude Code's validation (no content fallback), parent
 * directories, atomic writes, encodings and symlinks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeTool } from '../src/tools/write.js';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { call, fileApp } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const WRITE_ALLOWED = { permissions: { allow: ['Read', 'Write'] } };

function write(p: string, content: string | Buffer): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  return p;
}

describe('Write', () => {
  it('creates a file, with its missing parent directories, without a Read', async () => {
    t = await fileApp(WRITE_ALLOWED);
    const f = path.join(t.workspace, 'deep', 'er', 'new.txt');
    const r = await call(t, 'Write', { file_path: f, content: 'hello\nworld\n' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(`File created successfully at: ${f}`);
    expect(fs.readFileSync(f, 'utf8')).toBe('hello\nworld\n');
  });

  it('refuses to overwrite a file not read in this session [2], and overwrites it after a Read', async () => {
    t = await fileApp(WRITE_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'old 1\nold 2\nsame\n');
    const refused = await call(t, 'Write', { file_path: f, content: 'new\n' });
    expect(refused).toMatchObject({ isError: true, errorClass: 'validation' });
    expect(refused.text).toContain('File has not been read yet. Read it first before writing to it.');
    expect(fs.readFileSync(f, 'utf8')).toBe('old 1\nold 2\nsame\n');

    await call(t, 'Read', { file_path: f });
    const ok = await call(t, 'Write', { file_path: f, content: 'new 1\nold 2\nsame\n' });
    expect(ok.isError).toBe(false);
    expect(ok.text).toContain(`The file ${f} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:`);
    expect(ok.text).toContain('     1\tnew 1');
    expect(fs.readFileSync(f, 'utf8')).toBe('new 1\nold 2\nsame\n');
    // The cache now holds what was written: a second Write needs no Read.
    expect((await call(t, 'Write', { file_path: f, content: 'third\n' })).isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('third\n');
  });

  it('refuses a file whose mtime moved after the Read [3], even with the same content (no fallback)', async () => {
    t = await fileApp(WRITE_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'same\n');
    await call(t, 'Read', { file_path: f });
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(f, later, later);
    const r = await call(t, 'Write', { file_path: f, content: 'new\n' });
    expect(r.text).toContain(
      'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.',
    );
    expect(fs.readFileSync(f, 'utf8')).toBe('same\n');
    await call(t, 'Read', { file_path: f });
    expect((await call(t, 'Write', { file_path: f, content: 'new\n' })).isError).toBe(false);
  });

  it('refuses a path an Edit deny rule covers [1]: Edit rules cover Write', async () => {
    t = await fileApp({ permissions: { allow: ['Read', 'Write'], deny: ['Edit(./generated/**)'] } });
    const r = await call(t, 'Write', { file_path: path.join(t.workspace, 'generated', 'x.ts'), content: 'x' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('File is in a directory that is denied by your permission settings.');
    expect(fs.existsSync(path.join(t.workspace, 'generated'))).toBe(false);
  });

  it('refuses a directory as the target with a clear message', async () => {
    t = await fileApp(WRITE_ALLOWED);
    fs.mkdirSync(path.join(t.workspace, 'd'));
    const r = await call(t, 'Write', { file_path: path.join(t.workspace, 'd'), content: 'x' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('is a directory');
  });

  it('writes the content\u2019s own line endings, keeps the mode and a BOM, and leaves no temp file', async () => {
    t = await fileApp(WRITE_ALLOWED);
    const f = write(path.join(t.workspace, 'w.txt'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a\r\nb\r\n')]));
    fs.chmodSync(f, 0o640);
    await call(t, 'Read', { file_path: f });
    expect((await call(t, 'Write', { file_path: f, content: 'x\ny\n' })).isError).toBe(false);
    const raw = fs.readFileSync(f);
    expect([...raw.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(raw.subarray(3).toString('utf8')).toBe('x\ny\n');
    expect(fs.statSync(f).mode & 0o7777).toBe(0o640);
    expect(fs.readdirSync(t.workspace)).toEqual(['w.txt']);
  });

  it('says so when the content is already exactly the file\u2019s', async () => {
    t = await fileApp(WRITE_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'same\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Write', { file_path: f, content: 'same\n' });
    expect(r.text).toContain('its content was already exactly this');
  });

  it('writes a symlink\u2019s target inside the workspace and keeps the link', async () => {
    t = await fileApp(WRITE_ALLOWED);
    const real = write(path.join(t.workspace, 'sub', 'real.txt'), 'v1\n');
    const link = path.join(t.workspace, 'link.txt');
    fs.symlinkSync(real, link);
    await call(t, 'Read', { file_path: link });
    expect((await call(t, 'Write', { file_path: link, content: 'v2\n' })).isError).toBe(false);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe('v2\n');
  });

  it('never writes through a symlinked directory that leads outside, even in bypass mode', async () => {
    const outside = tmpDir();
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    fs.symlinkSync(outside, path.join(t.workspace, 'out'));
    const r = await call(t, 'Write', { file_path: path.join(t.workspace, 'out', 'evil.sh'), content: 'rm -rf /\n' });
    expect(r).toMatchObject({ isError: true, errorClass: 'permission' });
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('is destructive only over an existing file', () => {
    const root = tmpDir();
    const existing = write(path.join(root, 'e.txt'), 'x');
    expect(writeTool.isDestructive({ file_path: existing, content: '' })).toBe(true);
    expect(writeTool.isDestructive({ file_path: path.join(root, 'nope.txt'), content: '' })).toBe(false);
    expect(writeTool.isReadOnly({ file_path: existing, content: '' })).toBe(false);
    expect(writeTool.isConcurrencySafe({ file_path: existing, content: '' })).toBe(false);
    expect(writeTool.getPath({ file_path: existing, content: '' })).toBe(existing);
  });
});
