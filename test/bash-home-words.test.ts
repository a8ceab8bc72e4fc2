/**
 * `$HOME` in a path is the home directory commands run with: `docker run -v
 * $HOME/.npm:/root/.npm node:20 npm ci`, `ls $HOME/.cache` or `cat
 * "$HOME/.npmrc"` were a safety ask in every mode and policy,
 * bypassPermissions too (an expansion names a place no check can know, and
 * toolexec's own files count as denied), where `~/.npm` was judged as the
 * home directory's. Such a word is now judged as `~/` is, when the line
 * gives HOME no value; other forms stay unknown. Real rule indexes and
 * trees; the home directory is a temp dir given as the commands' HOME.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashTests, BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';

bashTests();

const DENY = ['Read(./.env)', 'Edit(./.env)'];

/** A workspace holding .env and a home directory whose `proj` leads to it. */
function withHome(home = tmpDir('toolexec-home-words-')): { env: RuleEnv; home: string } {
  const env = ruleEnv({ deny: DENY, mode: BYPASS.defaultMode });
  env.ctx.childEnv = { HOME: home };
  fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
  fs.mkdirSync(home, { recursive: true });
  fs.symlinkSync(env.ws, path.join(home, 'proj'));
  fs.mkdirSync(path.join(home, '.npm'));
  return { env, home };
}

describe('$HOME in a path', () => {
  it('is the home directory: outside the workspace, an ordinary working-directory ask', async () => {
    const { env, home } = withHome();
    for (const c of ['docker run --rm -v $HOME/.npm:/root/.npm node:20 npm ci', 'ls $HOME/.cache', 'cat "$HOME/.npmrc"', 'ls ${HOME}/.npm', 'du -sh $HOME/.npm']) {
      const r = await env.check(c);
      // bypassPermissions lets a working-directory ask through; a safety ask it would not.
      expect(r.behavior === 'allow' || r.behavior === 'passthrough' || (r.behavior === 'ask' && r.type === 'working_dir'), `${c}: ${JSON.stringify(r)}`).toBe(true);
    }
    expect(await env.check('ls $HOME/.npm')).toMatchObject({ behavior: 'ask', type: 'working_dir', detail: path.join(home, '.npm') });
  });

  it('leads where the home directory leads, and other forms stay unknown', async () => {
    const { env, home } = withHome();
    for (const c of ['cat $HOME/proj/.env', 'cat "${HOME}/proj/.env"', 'cp $HOME/proj/.env /tmp/x', 'docker run --rm -v $HOME/proj/.env:/e alpine cat /e']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'deny', type: 'rule' });
    }
    // As the same command with the path written out.
    for (const c of ['docker run --rm -v $HOME/proj:/w alpine ls /w', 'tar czf /tmp/p.tgz -C $HOME proj', 'grep -r SECRET $HOME/proj']) {
      const judged = async (x: string): Promise<unknown[]> => {
        const r = await env.check(x);
        return r.behavior === 'passthrough' ? [r.behavior] : [r.behavior, r.type, r.detail];
      };
      expect(await judged(c), c).toEqual(await judged(c.replaceAll('$HOME', home)));
    }
    expect(await env.check('grep -r SECRET $HOME/proj')).toMatchObject({ behavior: 'ask', type: 'safety' });
    for (const c of ['ls "$HOME"/proj', 'ls $HOME/$X', 'ls $HOMEDIR/proj', 'HOME=/tmp npm test && cat $HOME/proj/x']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    // A home bash would split or expand further.
    const spaced = withHome(path.join(tmpDir('toolexec-home-words-'), 'a b')).env;
    expect(await spaced.check('ls $HOME/.npm')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });
});
