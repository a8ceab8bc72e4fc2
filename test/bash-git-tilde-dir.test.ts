/**
 * git's file names after `-C ~/dir`: git takes them from where -C leads, and a
 * leading `~/` is the home directory (bash expands it before git runs), as
 * the git checks already read it for the repository. The path model took such
 * a -C for an expansion, so every operand of `git -C ~/x add .` was an
 * unknown location: a safety ask in every mode and policy (toolexec's own
 * files count as denied), bypassPermissions too. They are now resolved from
 * the home directory; a home that leads into the workspace is judged there.
 * Real rule indexes and a real home directory (HOME set for the workspace).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initBashParser } from '../src/bash/parser.js';
import { cleanupTmp, tmpDir } from './helpers.js';
import { BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';

beforeAll(async () => {
  await initBashParser();
});
const savedHome = process.env.HOME;
afterEach(() => {
  process.env.HOME = savedHome;
});
afterAll(cleanupTmp);

const DENY = ['Read(./.env)', 'Edit(./.env)'];

/** A workspace whose home directory holds `proj`, a link to it, and `other`, a directory outside it. */
function withHome(mode: 'default' | typeof BYPASS.defaultMode): { env: RuleEnv; home: string } {
  const home = tmpDir('toolexec-home-');
  process.env.HOME = home;
  const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY, mode });
  fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
  fs.symlinkSync(env.ws, path.join(home, 'proj'));
  fs.mkdirSync(path.join(home, 'other'));
  return { env, home };
}

describe('git -C ~/dir', () => {
  it('resolves the names git is given from the home directory', async () => {
    const { env, home } = withHome('default');
    expect(env.ctx.workspace.home).toBe(home);
    expect(await env.check('git -C ~/other add .')).toMatchObject({ behavior: 'ask', type: 'working_dir', detail: path.join(home, 'other') });
    expect(await env.check('git -C ~/other status')).toMatchObject({ behavior: 'allow' });
    // In bypassPermissions the engine lets a working-directory ask through; a safety ask it would not.
    const bypass = withHome(BYPASS.defaultMode).env;
    expect(await bypass.check('git -C ~/other add .')).toMatchObject({ behavior: 'ask', type: 'working_dir' });
    for (const c of ['git -C ~/other add -A', 'git -C ~/other commit -m wip']) {
      expect(await bypass.check(c), c).toMatchObject({ behavior: 'allow' });
    }
  });

  it('judges them in the workspace when home leads there, and asks for what it cannot tell', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const { env } = withHome(mode);
      for (const c of ['git -C ~/proj add .env', 'git -C ~/proj commit -F .env', 'git -C ~/other/../proj add .env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule' });
      }
      for (const c of ['git -C ~nobody/x add .', 'git -C "$DIR/proj" add notes.txt']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
      // A pattern is expanded and judged name by name: ~/proj's .env.
      expect(await env.check('git -C ~/pro* add .env')).toMatchObject({ behavior: 'deny', type: 'rule' });
    }
  });
});
