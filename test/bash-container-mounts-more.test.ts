/**
 * Container mounts fp11's model missed: with Read(./.env) denied, `docker run
 * -v "$PWD":/w alpine cat /w/.env` (or `-v .:/w`, `--mount source=.`) was
 * allowed under Bash(docker run:*), as a mounted directory was judged as a
 * read of the directory alone, not of what lies below it; and `-v ./.env:/x`
 * got past the check spelled `--label -e -v ./.env:/x` (-e took -v for its
 * value, where pflag gives -e to --label), `-dv ./.env:/x` (a cluster), `--mount
 * type=bind,Source=./.env,…` (docker lowercases keys), `--mount
 * 'type=bind,"source=./.env",…'` (a CSV field) or `$F ./.env:/x` (an option
 * that is an expansion). A mounted directory is now a tree read (listed, an ask
 * when it holds a denied file), short options are read as pflag reads clusters,
 * -e takes no word that is an option, keys are compared in any case, quotes and
 * the word after an expansion are judged. Real rule indexes, and the real
 * docker client against a daemon on a unix socket recording what it is asked
 * to mount.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';

bashTests();

const mountsFile = ['--label -e -v ./.env:/x', '-l -e -v ./.env:/x', '-dv ./.env:/x', '-dv./.env:/x', "--mount 'type=bind,Source=./.env,target=/x'", '--mount=type=bind,SRC=./.env,dst=/x', '$F ./.env:/x'];
const mountsTree = ['-v .:/w', '-v "$PWD":/w', '--mount type=bind,source=.,target=/w', '-v ./src/..:/w'];

describe('container mounts', () => {
  it('a mounted denied file, or a directory holding one, is refused or asked', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(docker run:*)'], deny: ['Read(./.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.mkdirSync(path.join(env.ws, 'src'));
      for (const o of mountsFile) expect(await env.check(`docker run ${o} alpine cat /x`), `${mode}: ${o}`).toMatchObject({ behavior: 'deny' });
      expect(await env.check(`docker run --mount 'type=bind,"source=./.env",target=/x' alpine cat /x`)).toMatchObject({ behavior: 'ask', type: 'safety' });
      for (const o of mountsTree) expect(await env.check(`docker run ${o} alpine cat /w/.env`), `${mode}: ${o}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      // A directory holding no denied file, and variables, as before.
      for (const c of ['docker run --rm -v "$PWD/src":/app -w /app node:20 npm test', 'docker run -it -e ENV_FILE=.env --rm alpine env', 'docker run --rm -e "TOKEN=$TOKEN" alpine env']) {
        expect((await env.check(c)).behavior, `${mode}: ${c}`).toBe('allow');
      }
    }
  });

  it('what it rests on: the docker client asks the daemon to mount .env for each spelling', async () => {
    const dir = tmpDir('toolexec-docker-');
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
    const sock = path.join(dir, 'd.sock');
    const asked: string[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.method === 'POST') asked.push(body);
        res.writeHead(req.method === 'POST' ? 500 : 200, { 'Content-Type': 'application/json', 'Api-Version': '1.41' });
        res.end(req.method === 'POST' ? '{"message":"test daemon"}' : 'OK');
      });
    });
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      for (const o of [...mountsFile, `--mount 'type=bind,"source=./.env",target=/x'`]) {
        asked.length = 0;
        await new Promise<void>((resolve) => {
          // Asynchronously: the daemon answers on this event loop.
          const p = spawn('bash', ['-c', `F=-v; docker run ${o} alpine cat /x`], { cwd: ws, env: { ...process.env, DOCKER_HOST: `unix://${sock}` } });
          p.on('close', () => resolve());
        });
        const create = asked.map((b) => JSON.parse(b) as { HostConfig?: { Binds?: string[]; Mounts?: Array<{ Source: string }> } }).find((b) => b.HostConfig);
        const sources = [...(create?.HostConfig?.Binds ?? []).map((b) => b.split(':')[0]), ...(create?.HostConfig?.Mounts ?? []).map((m) => m.Source)];
        expect(sources, o).toContain(path.join(ws, '.env'));
      }
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
