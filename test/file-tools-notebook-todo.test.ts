/**
 * NotebookEdit and TodoWrite through POST /execute: notebook cells replaced,
 * inserted and deleted on real .ipynb files with Claude Code's checks; the
 * todo list kept in the session and persisted in SQLite.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { notebookEditTool } from '../src/tools/notebook-edit.js';
import { todoWriteTool } from '../src/tools/todo-write.js';
import { cleanupTmp, tmpDir, type TestApp } from './helpers.js';
import { call, directContext, fileApp, runDirect } from './helpers-files.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const NB_ALLOWED = { permissions: { allow: ['Read', 'NotebookEdit'] } };

function notebook(cells: Array<Record<string, unknown>>, minor = 5): string {
  return `${JSON.stringify({ cells, metadata: { language_info: { name: 'python' } }, nbformat: 4, nbformat_minor: minor }, null, 1)}\n`;
}

function makeNotebook(dir: string, minor = 5): string {
  const f = path.join(dir, 'nb.ipynb');
  fs.writeFileSync(
    f,
    notebook(
      [
        { cell_type: 'markdown', id: 'intro', metadata: {}, source: ['# Title'] },
        { cell_type: 'code', id: 'calc', metadata: {}, execution_count: 3, outputs: [{ output_type: 'stream', name: 'stdout', text: ['2\n'] }], source: ['print(1+1)'] },
      ].map((c) => (minor >= 5 ? c : { ...c, id: undefined })),
      minor,
    ),
  );
  return f;
}

const cells = (f: string): Array<Record<string, unknown>> => (JSON.parse(fs.readFileSync(f, 'utf8')) as { cells: Array<Record<string, unknown>> }).cells;

describe('NotebookEdit', () => {
  it('replaces a cell by id, clearing a code cell\u2019s outputs, and keeps the file\u2019s format', async () => {
    t = await fileApp(NB_ALLOWED);
    const f = makeNotebook(t.workspace);
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'calc', new_source: 'print(2+2)' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe('Updated cell calc with print(2+2)');
    const c = cells(f);
    expect(c[1]).toMatchObject({ id: 'calc', cell_type: 'code', source: 'print(2+2)', outputs: [], execution_count: null });
    const text = fs.readFileSync(f, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n "cells": [');
    // The Read afterwards shows the new source.
    expect((await call(t, 'Read', { file_path: f })).text).toContain('print(2+2)');
  });

  it('inserts after a cell (cell_type required) and deletes by cell-N, without a new Read in between', async () => {
    t = await fileApp(NB_ALLOWED);
    const f = makeNotebook(t.workspace);
    await call(t, 'Read', { file_path: f });
    const missingType = await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'intro', new_source: 'x', edit_mode: 'insert' });
    expect(missingType.text).toContain('Cell type is required when using edit_mode=insert.');
    const ins = await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'intro', new_source: 'Some *notes*', cell_type: 'markdown', edit_mode: 'insert' });
    expect(ins.isError).toBe(false);
    expect(ins.text).toMatch(/^Inserted cell [0-9a-f]{12} with Some \*notes\*$/);
    expect(cells(f).map((c) => c.source)).toEqual([['# Title'], 'Some *notes*', ['print(1+1)']]);
    const del = await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'cell-0', new_source: '', edit_mode: 'delete' });
    expect(del.isError).toBe(false);
    expect(del.text).toBe('Deleted cell intro');
    expect(cells(f).map((c) => c.source)).toEqual(['Some *notes*', ['print(1+1)']]);
  });

  it('inserts at the beginning without a cell_id, and gives no id to cells of notebooks before 4.5', async () => {
    t = await fileApp(NB_ALLOWED);
    const f = makeNotebook(t.workspace, 4);
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'NotebookEdit', { notebook_path: f, new_source: 'import os', cell_type: 'code', edit_mode: 'insert' });
    expect(r.text).toBe('Inserted cell cell-0 with import os');
    expect(cells(f)[0]).toEqual({ cell_type: 'code', metadata: {}, execution_count: null, outputs: [], source: 'import os' });
  });

  it('turns a code cell into markdown without outputs', async () => {
    t = await fileApp(NB_ALLOWED);
    const f = makeNotebook(t.workspace);
    await call(t, 'Read', { file_path: f });
    await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'calc', new_source: 'text', cell_type: 'markdown' });
    expect(cells(f)[1]).toEqual({ cell_type: 'markdown', id: 'calc', metadata: {}, source: 'text' });
  });

  it('refuses with Claude Code\u2019s messages: not a notebook, not read, changed, bad JSON, unknown cells', async () => {
    t = await fileApp(NB_ALLOWED);
    const txt = path.join(t.workspace, 'a.txt');
    fs.writeFileSync(txt, 'x');
    expect((await call(t, 'NotebookEdit', { notebook_path: txt, cell_id: 'a', new_source: 'x' })).text).toContain(
      'File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.',
    );
    expect((await call(t, 'NotebookEdit', { notebook_path: path.join(t.workspace, 'none.ipynb'), cell_id: 'a', new_source: 'x' })).text).toContain(
      'Notebook file does not exist.',
    );
    const f = makeNotebook(t.workspace);
    expect((await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'calc', new_source: 'x' })).text).toContain(
      'File has not been read yet. Read it first before writing to it.',
    );
    await call(t, 'Read', { file_path: f });
    expect((await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'nope', new_source: 'x' })).text).toContain(
      'Cell with ID "nope" not found in notebook.',
    );
    expect((await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'cell-9', new_source: 'x' })).text).toContain(
      'Cell with index 9 does not exist in notebook.',
    );
    expect((await call(t, 'NotebookEdit', { notebook_path: f, new_source: 'x' })).text).toContain(
      'Cell ID must be specified when not inserting a new cell.',
    );
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(f, later, later);
    expect((await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'calc', new_source: 'x' })).text).toContain(
      'File has been modified since read',
    );
    const bad = path.join(t.workspace, 'bad.ipynb');
    fs.writeFileSync(bad, '{not json');
    t.app.toolexec.sessions.get('s-files').fileState.set(t.app.toolexec.workspace.canonical(bad), {
      content: '{not json',
      timestamp: Math.floor(fs.statSync(bad).mtimeMs),
      offset: undefined,
      limit: undefined,
      isPartialView: false,
    });
    expect((await call(t, 'NotebookEdit', { notebook_path: bad, cell_id: 'a', new_source: 'x' })).text).toContain('Notebook is not valid JSON.');
  });

  it('is covered by Edit rules and deferred', async () => {
    t = await fileApp({ permissions: { allow: ['Read', 'NotebookEdit'], deny: ['Edit(*.ipynb)'] } });
    const f = makeNotebook(t.workspace);
    await call(t, 'Read', { file_path: f });
    const r = await call(t, 'NotebookEdit', { notebook_path: f, cell_id: 'calc', new_source: 'x' });
    expect(r).toMatchObject({ isError: true, status: 'denied' });
    expect(r.decision?.reason).toEqual({ type: 'rule', detail: 'Edit(*.ipynb)' });
    expect(notebookEditTool.shouldDefer).toBe(true);
    expect(notebookEditTool.isDestructive({ notebook_path: f, new_source: '', edit_mode: 'delete' })).toBe(true);
  });
});

describe('TodoWrite', () => {
  const todos = [
    { content: 'Run tests', status: 'in_progress', activeForm: 'Running tests' },
    { content: 'Fix bugs', status: 'pending', activeForm: 'Fixing bugs' },
  ];

  it('keeps the list in the session, persisted in SQLite, with Claude Code\u2019s confirmation, allowed by itself', async () => {
    t = await fileApp();
    const r = await call(t, 'TodoWrite', { todos }, 's-todo');
    expect(r.isError).toBe(false);
    // Claude Code's words, written out: compared with the constant that makes them, a change to them passed.
    expect(r.text).toBe(
      'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable',
    );
    expect(r.decision).toMatchObject({ behavior: 'allow', reason: { type: 'tool' } });
    expect(t.app.toolexec.sessions.get('s-todo').todos).toEqual(todos);
    t.app.toolexec.writer.flushNow();
    const row = t.app.toolexec.db.prepare('SELECT todos FROM sessions WHERE id = ?').get('s-todo') as { todos: string };
    expect(JSON.parse(row.todos)).toEqual(todos);
  });

  it('clears the list once every task is completed', async () => {
    t = await fileApp();
    await call(t, 'TodoWrite', { todos }, 's-todo');
    const done = todos.map((x) => ({ ...x, status: 'completed' }));
    expect((await call(t, 'TodoWrite', { todos: done }, 's-todo')).isError).toBe(false);
    expect(t.app.toolexec.sessions.get('s-todo').todos).toEqual([]);
  });

  it('rejects a bad status or an empty content with the field named', async () => {
    t = await fileApp();
    const r = await call(t, 'TodoWrite', { todos: [{ content: '', status: 'doing', activeForm: 'x' }] }, 's-todo');
    expect(r).toMatchObject({ isError: true, errorClass: 'validation' });
    expect(r.text).toContain('todos[0].status');
    expect(t.app.toolexec.sessions.get('s-todo').todos).toEqual([]);
  });

  it('is deferred, not read-only, and reports old and new lists to hooks', async () => {
    expect(todoWriteTool.shouldDefer).toBe(true);
    expect(todoWriteTool.isReadOnly({ todos: [] })).toBe(false);
    const ctx = directContext({ root: tmpDir() });
    ctx.session.todos = todos;
    const r = await runDirect(todoWriteTool, { todos: [todos[1]] }, ctx);
    expect(r).toMatchObject({ stage: 'done', data: { oldTodos: todos, newTodos: [todos[1]] } });
    expect(ctx.session.todos).toEqual([todos[1]]);
  });
});
