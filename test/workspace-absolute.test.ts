/**
 * absolute() stands for path.resolve() on the permission checks' hot path: a path already absolute
 * and normal is returned as it is, and every other spelling is resolved. realpathLoose within a
 * decision answers the directories above a real path, and a plain name in a known real directory,
 * without asking realpath again: the answers are the ones realpath gives.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withDecisionMemo } from '../src/util/decision-memo.js';
import { absolute, realpathLoose, resolveTarget } from '../src/workspace.js';
import { cleanupTmp, tmpDir } from './helpers.js';

afterAll(cleanupTmp);

describe('absolute', () => {
  it('is path.resolve for every spelling', () => {
    const cases = ['/', '/a', '/a/b', '/a/b/', '//a', '/a//b', '/a/./b', '/a/../b', '/a/.', '/a/..', '/.', '/..', '/a/.b', '/a/..b', '/a/b.', '/a/b..', '/a/...', '/a/.../b', 'a', 'a/../b', '', '.', '..', '/a/b/.git', '/.git', './x'];
    for (const c of cases) expect(absolute(c), JSON.stringify(c)).toBe(path.resolve(c));
  });
});

describe('realpathLoose within a decision', () => {
  it('answers as realpath does through links, for the directories above and a name below a known one', () => {
    const root = fs.realpathSync(tmpDir());
    fs.mkdirSync(path.join(root, 'real', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(root, 'real', 'sub', 'f'), 'x');
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'link'));
    fs.symlinkSync(path.join(root, 'real', 'sub', 'f'), path.join(root, 'real', 'sub', 'flink'));
    const asks = [
      path.join(root, 'link', 'sub', 'f'),
      path.join(root, 'link', 'sub'),
      path.join(root, 'link'),
      path.join(root, 'real', 'sub', 'flink'),
      path.join(root, 'real', 'sub'),
      path.join(root, 'real'),
      root,
      path.join(root, 'link', 'sub', 'missing', 'deeper'),
      path.join(root, 'real', 'sub', 'f'),
    ];
    const outside = asks.map((p) => realpathLoose(p));
    withDecisionMemo(() => {
      // The file's target first, as the Edit check asks it: its directory is then known real.
      expect(resolveTarget(path.join(root, 'link', 'sub', 'f')).target).toBe(path.join(root, 'real', 'sub', 'f'));
      expect(asks.map((p) => realpathLoose(p))).toEqual(outside);
    });
    expect(outside).toEqual([
      path.join(root, 'real', 'sub', 'f'),
      path.join(root, 'real', 'sub'),
      path.join(root, 'real'),
      path.join(root, 'real', 'sub', 'f'),
      path.join(root, 'real', 'sub'),
      path.join(root, 'real'),
      root,
      path.join(root, 'real', 'sub', 'missing', 'deeper'),
      path.join(root, 'real', 'sub', 'f'),
    ]);
  });
});
