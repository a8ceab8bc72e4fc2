/**
 * The file tools judge the path when the permission check runs, and again,
 * on where it really leads, when they open or write it: a symlink swapped in
 * between (while an approver looks at the request, or by a process racing
 * the call) must not carry a Read to a Read-denied file, or a Write, Edit or
 * NotebookEdit into an Edit-denied one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { approvedAfter, call, fileApp } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  cleanupTmp();
});

function relink(link: string, target: string): void {
  fs.unlinkSync(link);
  fs.symlinkSync(target, link);
}

const config = { permissions: { headless: 'wait' as const, askTimeoutMs: 30_000, deny: ['Read(./.env)', 'Edit(./config/**)'] } };

describe('a symlink swapped after the permission check', () => {
  it('Read: the approved link now leads to a Read-denied file: refused, nothing of it shown', async () => {
    t = await fileApp(config);
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const out = tmpDir();
    fs.writeFileSync(path.join(out, 'readme'), 'harmless\n');
    const link = path.join(out, 'link');
    fs.symlinkSync(path.join(out, 'readme'), link);
    // Outside the workspace: asks; the approver sees a link to a harmless file.
    const r = await approvedAfter(t, 'Read', { file_path: link }, () => relink(link, path.join(t!.workspace, '.env')));
    expect(r.isError).toBe(true);
    expect(r.text).not.toContain('hunter2');
    expect(r.text).toContain('Read(./.env)');
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    // Unswapped, the same approved read goes through.
    relink(link, path.join(out, 'readme'));
    const ok = await approvedAfter(t, 'Read', { file_path: link }, () => undefined);
    expect(ok.text).toContain('harmless');
  });

  it('Write: a path that became a link into an Edit-denied directory: refused, nothing created there', async () => {
    t = await fileApp(config);
    fs.mkdirSync(path.join(t.workspace, 'config'));
    const notes = path.join(t.workspace, 'notes.txt');
    // Edits inside ask in the default mode; the approver sees a new file notes.txt.
    const r = await approvedAfter(t, 'Write', { file_path: notes, content: 'PWNED' }, () => fs.symlinkSync('config/app.yml', notes));
    expect(r.isError).toBe(true);
    expect(r.text).toContain('Edit(./config/**)');
    expect(r.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(fs.existsSync(path.join(t.workspace, 'config', 'app.yml'))).toBe(false);
  });

  it('Edit and NotebookEdit: a link swapped from a file read to an Edit-denied one that was read too: unchanged', async () => {
    t = await fileApp(config);
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, 'config'));
    fs.writeFileSync(path.join(ws, 'config', 'prod.yml'), 'mode: safe\n');
    fs.writeFileSync(path.join(ws, 'draft.yml'), 'mode: safe\n');
    const nb = JSON.stringify({ cells: [{ cell_type: 'code', id: 'c1', source: 'x = 1', metadata: {}, outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 5 });
    fs.writeFileSync(path.join(ws, 'config', 'prod.ipynb'), nb);
    fs.writeFileSync(path.join(ws, 'draft.ipynb'), nb);
    // Reading them is allowed; only editing config/ is denied.
    for (const f of ['config/prod.yml', 'draft.yml', 'config/prod.ipynb', 'draft.ipynb']) expect((await call(t, 'Read', { file_path: path.join(ws, f) })).isError).toBe(false);
    fs.symlinkSync('draft.yml', path.join(ws, 'cur.yml'));
    fs.symlinkSync('draft.ipynb', path.join(ws, 'cur.ipynb'));
    const e = await approvedAfter(t, 'Edit', { file_path: path.join(ws, 'cur.yml'), old_string: 'safe', new_string: 'PWNED' }, () =>
      relink(path.join(ws, 'cur.yml'), 'config/prod.yml'),
    );
    expect(e.isError).toBe(true);
    expect(e.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(fs.readFileSync(path.join(ws, 'config', 'prod.yml'), 'utf8')).toBe('mode: safe\n');
    const n = await approvedAfter(t, 'NotebookEdit', { notebook_path: path.join(ws, 'cur.ipynb'), cell_id: 'c1', new_source: 'import os' }, () =>
      relink(path.join(ws, 'cur.ipynb'), 'config/prod.ipynb'),
    );
    expect(n.isError).toBe(true);
    expect(n.ex).toMatchObject({ status: 'failed', error_class: 'permission' });
    expect(fs.readFileSync(path.join(ws, 'config', 'prod.ipynb'), 'utf8')).toBe(nb);
  });
});
