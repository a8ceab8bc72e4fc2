/**
 * Edit against real files, through POST /execute: normal use, Claude Code's
 * validation messages and codes, the check again at write time, atomic
 * writes that keep mode, line endings and final newline, and symlinks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { fileStateKey } from '../src/file-state/cache.js';
import { editTool } from '../src/tools/edit.js';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { call, directContext, fileApp, runDirect } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const EDIT_ALLOWED = { permissions: { allow: ['Read', 'Edit'] } };

function write(p: string, content: string | Buffer): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  return p;
}

/** Moves a file's mtime a minute ahead, as an editor saving it later would. */
function touchLater(p: string): void {
  const later = new Date(Date.now() + 60_000);
  fs.utimesSync(p, later, later);
}

describe('Edit: normal use', () => {
  it('replaces a unique string after a Read and shows a numbered snippet like Claude Code', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'one\ntwo\nthree\nfour\n');
    expect((await call(t, 'Read', { file_path: f })).isError).toBe(false);
    const r = await call(t, 'Edit', { file_path: f, old_string: 'two', new_string: 'TWO' });
    expect(r.isError).toBe(false);
    expect(r.status).toBe('succeeded');
    expect(fs.readFileSync(f, 'utf8')).toBe('one\nTWO\nthree\nfour\n');
    expect(r.text).toContain(`The file ${f} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:`);
    expect(r.text).toContain('     2\tTWO');
    expect(r.text).toContain('     1\tone');
  });

  it('lets a second Edit follow without a new Read (the cache holds what was written)', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'alpha beta\n');
    await call(t, 'Read', { file_path: f });
    expect((await call(t, 'Edit', { file_path: f, old_string: 'alpha', new_string: 'ALPHA' })).isError).toBe(false);
    const second = await call(t, 'Edit', { file_path: f, old_string: 'beta', new_string: 'BETA' });
    expect(second.isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('ALPHA BETA\n');
  });

  it('replaces every occurrence with replace_all and says so', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'x = foo(foo)\nfoo\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'foo', new_string: 'bar', replace_all: true });
    expect(r.isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('x = bar(bar)\nbar\n');
    expect(r.text).toContain("All occurrences of 'foo' were successfully replaced with 'bar'.");
  });

  it('creates a new file (and its directories) from an empty old_string', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = path.join(t.workspace, 'new', 'dir', 'n.txt');
    const r = await call(t, 'Edit', { file_path: f, old_string: '', new_string: 'hello\n' });
    expect(r.isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('hello\n');
    // The new content is in the cache: an edit follows without a Read.
    expect((await call(t, 'Edit', { file_path: f, old_string: 'hello', new_string: 'bye' })).isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('bye\n');
  });

  it('deleting a whole line (empty new_string) takes its newline along, as in Claude Code', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'keep\ndrop me\nkeep too\n');
    await call(t, 'Read', { file_path: f });
    expect((await call(t, 'Edit', { file_path: f, old_string: 'drop me', new_string: '' })).isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('keep\nkeep too\n');
  });

  it('matches straight quotes typed by the model against curly quotes in the file, keeping the curly style', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'q.md'), 'He said \u201chello\u201d today.\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'said "hello"', new_string: 'said "goodbye"' });
    expect(r.isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('He said \u201cgoodbye\u201d today.\n');
  });

  it('gives hooks Claude Code\u2019s output shape (filePath, oldString, originalFile, structuredPatch)', async () => {
    const root = tmpDir();
    const ctx = directContext({ root });
    const f = write(path.join(root, 'a.txt'), 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n');
    ctx.session.fileState.set(ctx.workspace.canonical(f), { content: fs.readFileSync(f, 'utf8'), timestamp: Math.floor(fs.statSync(f).mtimeMs), offset: undefined, limit: undefined, isPartialView: false });
    const r = await runDirect(editTool, { file_path: f, old_string: 'l5', new_string: 'L5\nL5b' }, ctx);
    expect(r.stage).toBe('done');
    const data = (r as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({ filePath: f, oldString: 'l5', newString: 'L5\nL5b', replaceAll: false, userModified: false });
    expect(data.originalFile).toBe('l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n');
    expect(data.structuredPatch).toEqual([
      { oldStart: 2, oldLines: 7, newStart: 2, newLines: 8, lines: [' l2', ' l3', ' l4', '-l5', '+L5', '+L5b', ' l6', ' l7', ' l8'] },
    ]);
  });
});

describe('Edit: validation, with Claude Code\u2019s messages and codes', () => {
  it('[1] refuses identical strings', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'x\n');
    const r = await call(t, 'Edit', { file_path: f, old_string: 'x', new_string: 'x' });
    expect(r).toMatchObject({ isError: true, status: 'failed', errorClass: 'validation' });
    expect(r.text).toContain('No changes to make: old_string and new_string are exactly the same.');
  });

  it('[2] refuses a path an Edit deny rule covers, before any permission prompt', async () => {
    t = await fileApp({ permissions: { allow: ['Read', 'Edit'], deny: ['Edit(./locked/**)'] } });
    const f = write(path.join(t.workspace, 'locked', 'a.txt'), 'x\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'x', new_string: 'y' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('File is in a directory that is denied by your permission settings.');
    expect(fs.readFileSync(f, 'utf8')).toBe('x\n');
  });

  it('[10] refuses a file over 1 GiB without reading it', async () => {
    const root = tmpDir();
    const f = path.join(root, 'huge.txt');
    // A sparse file: the size is real, the disk blocks are not.
    fs.writeFileSync(f, '');
    fs.truncateSync(f, 1024 * 1024 * 1024 + 1);
    const r = await runDirect(editTool, { file_path: f, old_string: 'a', new_string: 'b' }, directContext({ root }));
    expect(r).toMatchObject({ stage: 'validate', code: 10 });
    expect((r as { message: string }).message).toBe('File is too large to edit (1GB). Maximum editable file size is 1GB.');
  });

  it('[6] refuses a large file never read without loading it, and one past the longest string with a clear message', async () => {
    const root = tmpDir();
    const f = path.join(root, 'big.txt');
    fs.writeFileSync(f, 'hello world\n');
    fs.truncateSync(f, 600 * 1024 * 1024);
    const ctx = directContext({ root });
    const r = await runDirect(editTool, { file_path: f, old_string: 'hello', new_string: 'bye' }, ctx);
    expect(r).toMatchObject({ stage: 'validate', code: 6 });
    // Read as a window, it is editable in principle, but 600 MB of text is more than a string can hold.
    ctx.session.fileState.set(fileStateKey(ctx.workspace, f), { content: 'hello world', timestamp: Math.floor(fs.statSync(f).mtimeMs), offset: 1, limit: 1, isPartialView: false });
    // (validateInput throws it; the pipeline makes it the call's error.)
    const big = await runDirect(editTool, { file_path: f, old_string: 'hello', new_string: 'bye' }, ctx).catch((e: Error) => ({ message: e.message }));
    expect((big as { message: string }).message).toBe('File is too large (600MB) to be handled as text; at most about 512MB can be.');
    fs.rmSync(f);
  });

  it('[4] a missing file names the working directory and a near name', async () => {
    t = await fileApp(EDIT_ALLOWED);
    write(path.join(t.workspace, 'notes.md'), 'x\n');
    const r = await call(t, 'Edit', { file_path: path.join(t.workspace, 'notes.txt'), old_string: 'x', new_string: 'y' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`File does not exist. Note: your current working directory is ${t.workspace}.`);
    expect(r.text).toContain(`Did you mean ${path.join(t.workspace, 'notes.md')}?`);
  });

  it('[3] refuses to create a file that already has content', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'content\n');
    const r = await call(t, 'Edit', { file_path: f, old_string: '', new_string: 'new' });
    expect(r.text).toContain('Cannot create new file - file already exists.');
    expect(fs.readFileSync(f, 'utf8')).toBe('content\n');
  });

  it('[5] sends notebooks to NotebookEdit', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'n.ipynb'), '{"cells":[]}');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'cells', new_string: 'x' });
    expect(r.text).toContain('File is a Jupyter Notebook. Use the NotebookEdit tool to edit this file.');
  });

  it('[6] refuses a file not read in this session (and a read in another session does not count)', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'x\n');
    await call(t, 'Read', { file_path: f }, 'other-session');
    const r = await call(t, 'Edit', { file_path: f, old_string: 'x', new_string: 'y' }, 's-files');
    expect(r).toMatchObject({ isError: true, errorClass: 'validation' });
    expect(r.text).toContain('File has not been read yet. Read it first before writing to it.');
    expect(fs.readFileSync(f, 'utf8')).toBe('x\n');
  });

  it('[6] refuses after a read recorded as a partial view', async () => {
    const root = tmpDir();
    const ctx = directContext({ root });
    const f = write(path.join(root, 'a.txt'), 'x\n');
    ctx.session.fileState.set(ctx.workspace.canonical(f), { content: 'x', timestamp: Math.floor(fs.statSync(f).mtimeMs), offset: undefined, limit: undefined, isPartialView: true });
    const r = await runDirect(editTool, { file_path: f, old_string: 'x', new_string: 'y' }, ctx);
    expect(r).toMatchObject({ stage: 'validate', code: 6, message: 'File has not been read yet. Read it first before writing to it.' });
  });

  it('[7] refuses a file changed outside the service since the Read, and succeeds after a new Read', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'original\n');
    await call(t, 'Read', { file_path: f });
    fs.writeFileSync(f, 'changed by someone else\n');
    touchLater(f);
    const refused = await call(t, 'Edit', { file_path: f, old_string: 'someone', new_string: 'me' });
    expect(refused).toMatchObject({ isError: true, errorClass: 'validation' });
    expect(refused.text).toContain(
      'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.',
    );
    expect(fs.readFileSync(f, 'utf8')).toBe('changed by someone else\n');
    await call(t, 'Read', { file_path: f });
    const ok = await call(t, 'Edit', { file_path: f, old_string: 'someone', new_string: 'me' });
    expect(ok.isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('changed by me else\n');
  });

  it('[7] accepts a newer mtime when a full read\u2019s content is unchanged, but not after a partial read', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const full = write(path.join(t.workspace, 'full.txt'), 'a\nb\n');
    const part = write(path.join(t.workspace, 'part.txt'), 'a\nb\n');
    await call(t, 'Read', { file_path: full });
    await call(t, 'Read', { file_path: part, offset: 1, limit: 1 });
    touchLater(full);
    touchLater(part);
    expect((await call(t, 'Edit', { file_path: full, old_string: 'b', new_string: 'B' })).isError).toBe(false);
    const r = await call(t, 'Edit', { file_path: part, old_string: 'a', new_string: 'A' });
    expect(r.text).toContain('File has been modified since read');
  });

  it('[8] reports a string that is not there, quoting it', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'abc\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'xyz', new_string: 'q' });
    expect(r.text).toContain('String to replace not found in file.\nString: xyz');
  });

  it('[9] counts the matches when replace_all is false', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'a.txt'), 'foo foo foo\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'foo', new_string: 'bar' });
    expect(r.text).toContain('Found 3 matches of the string to replace, but replace_all is false.');
    expect(r.text).toContain('String: foo');
    expect(fs.readFileSync(f, 'utf8')).toBe('foo foo foo\n');
  });

  it('checks again at write time: a change between validation and the call is refused', async () => {
    const root = tmpDir();
    const ws = path.join(root, 'ws');
    const f = path.join(ws, 'a.txt');
    // The PreToolUse hook runs after validation and before the call: it plays the outside editor.
    // A script of its own, outside the workspace: a file a hook's command line names is protected (run-scripts.ts).
    const hookScript = path.join(root, 'sneaky.sh');
    fs.writeFileSync(hookScript, `#!/bin/sh\nprintf 'sneaky\\n' >> "$1" && touch -m -t 209901010000 "$1"\n`, { mode: 0o755 });
    const hook = `${hookScript} a.txt`;
    t = await fileApp({
      workspace: { root: ws },
      permissions: { allow: ['Read', 'Edit'] },
      hooks: { PreToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: hook }] }] },
    });
    write(f, 'text\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'text', new_string: 'TEXT' });
    expect(r.isError).toBe(true);
    expect(r.status).toBe('failed');
    expect(r.text).toContain('File has been unexpectedly modified. Read it again before attempting to write it.');
    expect(fs.readFileSync(f, 'utf8')).toBe('text\nsneaky\n');
  });
});

describe('Edit: how the file is written', () => {
  it('keeps CRLF line endings, also for the lines it adds', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'w.txt'), 'first\r\nsecond\r\nthird\r\n');
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'first\nsecond', new_string: 'first\nmiddle\nsecond' });
    expect(r.isError).toBe(false);
    expect(fs.readFileSync(f, 'utf8')).toBe('first\r\nmiddle\r\nsecond\r\nthird\r\n');
  });

  it('keeps a missing final newline missing, and a present one present', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const without = write(path.join(t.workspace, 'no-nl.txt'), 'a\nb');
    const withNl = write(path.join(t.workspace, 'nl.txt'), 'a\nb\n');
    await call(t, 'Read', { file_path: without });
    await call(t, 'Read', { file_path: withNl });
    await call(t, 'Edit', { file_path: without, old_string: 'b', new_string: 'B' });
    await call(t, 'Edit', { file_path: withNl, old_string: 'b', new_string: 'B' });
    expect(fs.readFileSync(without, 'utf8')).toBe('a\nB');
    expect(fs.readFileSync(withNl, 'utf8')).toBe('a\nB\n');
  });

  it('keeps a UTF-8 BOM and a UTF-16LE encoding', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const bom = write(path.join(t.workspace, 'bom.txt'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('caf\u00e9\n')]));
    const u16 = write(path.join(t.workspace, 'u16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello\n', 'utf16le')]));
    await call(t, 'Read', { file_path: bom });
    await call(t, 'Read', { file_path: u16 });
    expect((await call(t, 'Edit', { file_path: bom, old_string: 'caf\u00e9', new_string: 'bar' })).isError).toBe(false);
    expect((await call(t, 'Edit', { file_path: u16, old_string: 'hello', new_string: 'world' })).isError).toBe(false);
    expect([...fs.readFileSync(bom).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(fs.readFileSync(bom).subarray(3).toString('utf8')).toBe('bar\n');
    const raw = fs.readFileSync(u16);
    expect([...raw.subarray(0, 2)]).toEqual([0xff, 0xfe]);
    expect(raw.subarray(2).toString('utf16le')).toBe('world\n');
  });

  it('writes atomically: a new inode, the mode kept, no temp file left behind', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'run.sh'), '#!/bin/sh\necho hi\n');
    fs.chmodSync(f, 0o750);
    const before = fs.statSync(f);
    await call(t, 'Read', { file_path: f });
    expect((await call(t, 'Edit', { file_path: f, old_string: 'hi', new_string: 'bye' })).isError).toBe(false);
    const after = fs.statSync(f);
    expect(after.ino).not.toBe(before.ino);
    expect(after.mode & 0o7777).toBe(0o750);
    expect(fs.readdirSync(t.workspace)).toEqual(['run.sh']);
  });

  it('refuses to replace a read-only file (even when running as root)', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const f = write(path.join(t.workspace, 'ro.txt'), 'x\n');
    fs.chmodSync(f, 0o444);
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'Edit', { file_path: f, old_string: 'x', new_string: 'y' });
    expect(r).toMatchObject({ isError: true, errorClass: 'io' });
    expect(r.text).toContain('is read-only (mode 0444)');
    expect(fs.readFileSync(f, 'utf8')).toBe('x\n');
  });

  it('writes through a symlink that stays inside the workspace: the target changes, the link stays', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const real = write(path.join(t.workspace, 'real.txt'), 'value=1\n');
    const link = path.join(t.workspace, 'link.txt');
    fs.symlinkSync('real.txt', link);
    await call(t, 'Read', { file_path: link });
    const r = await call(t, 'Edit', { file_path: link, old_string: 'value=1', new_string: 'value=2' });
    expect(r.isError).toBe(false);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe('value=2\n');
    // The cache is keyed by the real file: editing it by its own name needs no new Read.
    expect((await call(t, 'Edit', { file_path: real, old_string: 'value=2', new_string: 'value=3' })).isError).toBe(false);
  });

  it('never writes through a symlink that leads out of the workspace, even when bypass mode allows the call', async () => {
    const outside = tmpDir();
    const secret = write(path.join(outside, 'secret.txt'), 'keep me\n');
    t = await fileApp({ permissions: { defaultMode: 'bypassPermissions', allowBypass: true } });
    fs.symlinkSync(secret, path.join(t.workspace, 'innocent.txt'));
    const link = path.join(t.workspace, 'innocent.txt');
    expect((await call(t, 'Read', { file_path: link })).isError).toBe(false);
    const r = await call(t, 'Edit', { file_path: link, old_string: 'keep me', new_string: 'owned' });
    expect(r).toMatchObject({ isError: true, errorClass: 'permission' });
    expect(r.text).toContain('Refusing to write');
    expect(fs.readFileSync(secret, 'utf8')).toBe('keep me\n');
    // A dangling link is no way out either: its target is not created.
    fs.symlinkSync(path.join(outside, 'planted.txt'), path.join(t.workspace, 'dangling.txt'));
    const c = await call(t, 'Edit', { file_path: path.join(t.workspace, 'dangling.txt'), old_string: '', new_string: 'x' });
    expect(c.isError).toBe(true);
    expect(fs.existsSync(path.join(outside, 'planted.txt'))).toBe(false);
  });

  it('a FIFO is a quick error, never a hang', async () => {
    t = await fileApp(EDIT_ALLOWED);
    const fifo = path.join(t.workspace, 'pipe');
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [fifo]);
    const r = await call(t, 'Edit', { file_path: fifo, old_string: 'a', new_string: 'b' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('not a regular file');
  });
});

describe('Edit: declarations', () => {
  it('is neither read-only nor concurrency-safe, not destructive, and gives the classifier path and new text', () => {
    const input = { file_path: '/w/a.ts', old_string: 'a', new_string: 'b' };
    expect(editTool.isReadOnly(input)).toBe(false);
    expect(editTool.isConcurrencySafe(input)).toBe(false);
    expect(editTool.isDestructive(input)).toBe(false);
    expect(editTool.shouldDefer).toBe(false);
    expect(editTool.getPath(input)).toBe('/w/a.ts');
    expect(editTool.toAutoClassifierInput(input)).toBe('/w/a.ts: b');
    expect(editTool.toAutoClassifierInput({ ...input, new_string: 'x'.repeat(10_000) }).length).toBeLessThan(2100);
  });
});
