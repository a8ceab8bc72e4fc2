/**
 * Container tools' options: with Read(./.env) denied, `docker run -e
 * ENV_FILE=.env app` (a variable whose value merely names the file) was denied
 * in every mode, since the value after a `=` of an unmodelled program's
 * argument is judged as a file it may read; while `docker run -v ./.env:/x
 * alpine cat /x`, `-v $PWD/.env:/x` and `--mount type=bind,source=.env,…`,
 * which share the file with the container, were allowed under Bash(docker:*) and
 * in bypassPermissions (a `:` ends no name, and an expansion was not judged).
 * The words of -e/--env now name no file, and the host side of a bind
 * mount as a read (the working directory's `$PWD`/`$(pwd)` spelled out; any
 * other expansion an unknown location). Real rule indexes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';

bashTests();

const MODES = ['default', 'acceptEdits', BYPASS.defaultMode] as const;

describe('container tools: variables and bind mounts', () => {
  it('a variable whose value names a denied file is no read of it', async () => {
    for (const mode of MODES) {
      const env = ruleEnv({ allow: ['Bash(docker:*)', 'Bash(podman:*)'], deny: ['Read(./.env)', 'Read(**/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      // A mounted directory is listed: src is there (one not there yet asks, as for grep -r).
      fs.mkdirSync(path.join(env.ws, 'src'));
      for (const c of [
        'docker run -e K=.env alpine env',
        'docker run --rm -e ENV_FILE=.env -e NODE_ENV=test app',
        'docker run --env K=.env alpine',
        'docker run --env=K=.env alpine',
        'docker run -eK=.env alpine',
        'docker compose run -e DOTENV=.env web npm test',
        'docker exec -e K=config/.env web env',
        'podman run -e K=.env alpine',
        'docker run -e .env alpine',
        // Mounts of other places than the denied file (a directory holding it is the next test's).
        'docker run -v $PWD/src:/app/src node:20 ls /app',
        'docker run -v data:/var/lib/data alpine',
        'docker run --mount type=bind,source=src,target=/app alpine',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('a denied file shared with the container, or given as a file, is denied', async () => {
    for (const mode of MODES) {
      const env = ruleEnv({ allow: ['Bash(docker:*)', 'Bash(podman:*)'], deny: ['Read(./.env)', 'Read(**/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.mkdirSync(path.join(env.ws, 'config'));
      for (const c of [
        'docker run -v ./.env:/x alpine cat /x',
        'docker run -v .env:/x:ro alpine cat /x',
        'docker run -v $PWD/.env:/x alpine cat /x',
        'docker run -v "$(pwd)/.env:/x" alpine cat /x',
        'docker run -v "${PWD}"/.env:/x alpine cat /x',
        'docker run -v=.env:/x alpine cat /x',
        'docker run -v.env:/x alpine cat /x',
        'docker run --volume=.env:/x alpine cat /x',
        'docker run --volume .env:/x alpine cat /x',
        'docker run --mount type=bind,source=.env,target=/x alpine cat /x',
        'docker run --mount=type=bind,src=config/.env,dst=/x alpine cat /x',
        'cd config && docker run -v "$(pwd)/.env:/x" alpine cat /x',
        'podman run -v ./.env:/x alpine cat /x',
        'docker compose run -v ./.env:/x web cat /x',
        // As before: a file given to the tool, or the value read by a command of the line.
        'docker run --env-file .env alpine env',
        'docker run --env-file=.env alpine env',
        'docker run -e K=.env alpine cat .env',
        'docker run -e "K=$(cat .env)" alpine env',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny' });
      }
      // A directory holding it: the container may read every file below (bash-container-mounts-more.test.ts).
      for (const c of ['docker run --rm -v "$(pwd)":/app -w /app node:20 npm test', 'docker run -v ${PWD}:/app node:20']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^recursive read/) });
      }
      // A mount from a place no check can know: PWD given a value in the line, another variable.
      for (const c of ['PWD=/etc docker run -v $PWD/shadow:/x alpine cat /x', 'export PWD=/; docker run -v $PWD:/x alpine', 'docker run -v $DIR/.env:/x alpine cat /x', 'docker run --mount "type=bind,src=$F,dst=/x" alpine']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
    }
  });

  it('a home-relative mount is judged where the shell expands it', async () => {
    const env = ruleEnv({ deny: ['Read(~/.aws/**)'], mode: BYPASS.defaultMode });
    expect(await env.check('docker run -v ~/.aws:/root/.aws amazon/aws-cli s3 ls')).toMatchObject({ behavior: 'deny', type: 'rule' });
  });
});
