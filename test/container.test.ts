/**
 * The container without a Docker engine: the Dockerfile's stages and
 * settings, the compose file's references, and the image's runtime
 * reproduced outside Docker — a production install, the exact ENTRYPOINT and
 * CMD with the image's environment (paths and the port mapped into a temp
 * dir), the exact HEALTHCHECK command, SIGTERM — plus the compose pair
 * (toolexec and the example MCP server) started by their own commands.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { cleanupTmp, tmpDir } from './helpers.js';
import { ROOT, cleanEnv, runBin, spawnBin, type Proc } from './helpers-cli.js';
import { envOf, last, npmCiDryRun, readDockerfile, reproduceRuntime, workdirOf, yaml, type Dockerfile } from './helpers-container.js';

const TOKEN = 'container-test-token-0123456789';
const df: Dockerfile = readDockerfile();
const runtime = df.stage('runtime');

interface ComposeService {
  build?: { context: string; dockerfile?: string } | string;
  image?: string;
  init?: boolean;
  environment?: Record<string, string>;
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
}
const compose = yaml.load(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};

/** The image's start command: ENTRYPOINT then CMD, both exec form. */
function startCommand(): string[] {
  return [...last(runtime, 'ENTRYPOINT')!.exec!, ...last(runtime, 'CMD')!.exec!];
}

function optionValue(args: readonly string[], name: string): string {
  const i = args.indexOf(name);
  expect(i, `${name} in ${args.join(' ')}`).toBeGreaterThan(-1);
  return args[i + 1]!;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

afterAll(cleanupTmp);

describe('Dockerfile', () => {
  it('builds in one stage with the dev dependencies, and runs on node:20-bookworm-slim with the production ones', () => {
    expect(df.stages.map((s) => s.name)).toEqual(['toolchain', 'build', 'deps', 'runtime']);
    expect(runtime.from).toBe('node:20-bookworm-slim');
    const runs = (name: string): string => df.stage(name).instructions.filter((i) => i.op === 'RUN').map((i) => i.rest).join('\n');
    expect(df.stage('build').from).toBe('toolchain');
    expect(runs('build')).toMatch(/npm ci --ignore-scripts/);
    expect(runs('build')).toMatch(/npm run build/);
    expect(runs('deps')).toMatch(/npm ci --omit=dev --ignore-scripts/);
    // The compilers live in the toolchain stage only; the runtime copies the compiled node_modules.
    expect(runs('toolchain')).toMatch(/python3 make g\+\+/);
    expect(runs('runtime')).not.toMatch(/g\+\+|make|python3/);
    expect(runs('runtime')).toMatch(/--no-install-recommends ca-certificates tini ripgrep bubblewrap/);
  });

  it('rebuilds exactly the packages package.json allows install scripts for', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
    const allowed = Object.entries(pkg.allowScripts).filter(([, v]) => v).map(([k]) => k);
    const rebuilt = df
      .stage('deps')
      .instructions.filter((i) => i.op === 'RUN')
      .flatMap((i) => [...i.rest.matchAll(/npm rebuild ((?:[\w@/.-]+\s*)+)/g)].flatMap((m) => m[1]!.trim().split(/\s+/)));
    expect(rebuilt.sort()).toEqual(allowed.sort());
  });

  it('runs as a non-root user, with /data as a volume, port 8787, a HEALTHCHECK and an exec-form start command', () => {
    expect(last(runtime, 'USER')!.rest).toBe('node');
    expect(JSON.parse(last(runtime, 'VOLUME')!.rest)).toEqual(['/data']);
    expect(last(runtime, 'EXPOSE')!.rest).toBe('8787');
    const cmd = startCommand();
    // Under tini, installed by the runtime stage: it reaps what Bash commands leave behind.
    expect(cmd.slice(0, 6)).toEqual(['/usr/bin/tini', '-s', '--', 'node', '/app/dist/cli.js', 'serve']);
    expect(optionValue(cmd, '--host')).toBe('0.0.0.0');
    expect(optionValue(cmd, '--port')).toBe(last(runtime, 'EXPOSE')!.rest);
    expect(optionValue(cmd, '--data-dir')).toBe('/data');
    expect(optionValue(cmd, '--workspace')).toBe('/workspace');
    const hc = last(runtime, 'HEALTHCHECK')!;
    expect(hc.exec).toEqual(['node', '/app/dist/cli.js', 'health']);
    expect(hc.flags).toMatchObject({ interval: '15s', timeout: '5s' });
    // The health command's default target is the port the service listens on.
    expect(envOf(runtime, df).TOOLEXEC_URL).toBe(`http://127.0.0.1:${optionValue(cmd, '--port')}`);
    expect(workdirOf(runtime, df)).toBe('/app');
  });

  it('copies only what exists, and .dockerignore keeps local state and secrets out of the context', () => {
    const ignored = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const entry of ['node_modules', 'dist', '.env', '.toolexec', '.git']) expect(ignored).toContain(entry);
    for (const stage of df.stages) {
      for (const c of stage.instructions.filter((i) => i.op === 'COPY' && !i.flags.from)) {
        for (const src of c.rest.split(/\s+/).slice(0, -1)) {
          expect(fs.existsSync(path.join(ROOT, src)), `${stage.name}: COPY ${src}`).toBe(true);
          expect(ignored, `${src} is copied but ignored`).not.toContain(src);
        }
      }
    }
  });

  it("package-lock.json installs with `npm ci`, as the image's build and deps stages do", () => {
    const r = npmCiDryRun();
    expect(r.output.split('\n').filter((l) => /npm error (code|Missing)/.test(l))).toEqual([]);
    expect(r.status).toBe(0);
  });
});

describe('the image, reproduced outside Docker', () => {
  let root: string;
  let app: string;
  let notes: string[] = [];
  let port: number;

  /** Maps the image's paths and port onto this test's. */
  const map = (s: string): string =>
    s
      .replace(/^\/app(?=\/|$)/, app)
      .replace(/^\/data$/, path.join(root, 'data'))
      .replace(/^\/workspace$/, path.join(root, 'workspace'))
      .replace(/^8787$/, String(port))
      .replace('http://127.0.0.1:8787', `http://127.0.0.1:${port}`);

  /** The image's environment (Dockerfile ENV, mapped) plus what the caller adds, with nothing of this shell's TOOLEXEC_*. */
  const imageEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
    const env = cleanEnv();
    for (const [k, v] of Object.entries(envOf(runtime, df))) env[k] = map(v);
    return { ...env, ...extra };
  };
  /** An exec-form command with `node` as this Node (tini is this machine's: CI installs it). */
  const command = (argv: string[]): string[] => argv.map((a) => (a === 'node' ? process.execPath : map(a)));

  beforeAll(async () => {
    root = tmpDir('toolexec-image-');
    app = path.join(root, 'app');
    fs.mkdirSync(app);
    for (const d of ['data', 'workspace']) fs.mkdirSync(path.join(root, d));
    fs.writeFileSync(path.join(root, 'workspace', 'hello.txt'), 'hello from the workspace\n');
    port = await freePort();
    ({ notes } = reproduceRuntime(df, app));
  }, 300_000);

  it('holds the production dependencies only', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    for (const d of Object.keys(pkg.dependencies)) expect(fs.existsSync(path.join(app, 'node_modules', d)), d).toBe(true);
    // What the lock file marks dev-only (devDependencies not also needed by a dependency) is left out.
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.keys(pkg.devDependencies).filter((d) => lock.packages[`node_modules/${d}`]?.dev === true);
    expect(devOnly).toContain('vitest');
    for (const d of devOnly) expect(fs.existsSync(path.join(app, 'node_modules', d)), d).toBe(false);
    expect(fs.existsSync(path.join(app, 'dist', 'cli.js'))).toBe(true);
    if (notes.length > 0) console.warn(`container test: ${notes.join('; ')}`);
  });

  it('refuses to start on 0.0.0.0 without a token, and says how to give one', async () => {
    const [cmd, ...args] = command(startCommand());
    const r = await runBin(args, { command: [cmd!], cwd: app, env: imageEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing to listen on 0.0.0.0 without tokens: set server.tokens in the configuration or TOOLEXEC_TOKEN');
  });

  it('starts with its exact command and a token, passes its own HEALTHCHECK, executes a call, and stops on SIGTERM with exit 0', async () => {
    const [cmd, ...args] = command(startCommand());
    const proc: Proc = spawnBin(args, { command: [cmd!], cwd: app, env: imageEnv({ TOOLEXEC_TOKEN: TOKEN }) });
    try {
      await proc.waitFor(/listening on http:\/\/0\.0\.0\.0:\d+ \(workspace /);
      const [hcCmd, ...hcArgs] = command(last(runtime, 'HEALTHCHECK')!.exec!);
      const hc = await runBin(hcArgs, { command: [hcCmd!], cwd: app, env: imageEnv({ TOOLEXEC_TOKEN: TOKEN }) });
      expect(hc).toMatchObject({ code: 0, stdout: '/healthz: ok\n' });

      const res = await fetch(`http://127.0.0.1:${port}/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          tool_uses: [
            { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'hello.txt' } },
            { type: 'tool_use', id: 'toolu_grep', name: 'Grep', input: { pattern: 'workspace', output_mode: 'content' } },
          ],
        }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { tool_results: Array<{ content: string; is_error?: boolean }> };
      expect(body.tool_results[0]!.content).toContain('hello from the workspace');
      // Grep runs on ripgrep (the image installs it; here, this machine's).
      expect(body.tool_results[1]!.content).toMatch(/hello\.txt:(\d+:)?hello from the workspace/);
      expect(fs.existsSync(path.join(root, 'data', 'toolexec.db'))).toBe(true);
      const unauthenticated = await fetch(`http://127.0.0.1:${port}/tools`);
      expect(unauthenticated.status).toBe(401);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect(await proc.exited).toBe(0);
    const [hcCmd, ...hcArgs] = command(last(runtime, 'HEALTHCHECK')!.exec!);
    const after = await runBin(hcArgs, { command: [hcCmd!], cwd: app, env: imageEnv() });
    expect(after.code).toBe(1);
  });

  it('reaps what a Bash command leaves behind: an orphan goes to tini, which waits for it', async () => {
    const cfg = path.join(root, 'bash-allowed.json');
    fs.writeFileSync(cfg, JSON.stringify({ permissions: { allow: ['Bash'] } }));
    const [cmd, ...args] = command(startCommand());
    const p = await freePort();
    args[args.indexOf('--port') + 1] = String(p);
    const proc: Proc = spawnBin(args, { command: [cmd!], cwd: app, env: imageEnv({ TOOLEXEC_TOKEN: TOKEN, TOOLEXEC_CONFIG: cfg }) });
    const tini = proc.child.pid!;
    const childrenOf = (pid: number): number[] =>
      fs
        .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    try {
      await proc.waitFor(/listening on http:\/\/0\.0\.0\.0:\d+/);
      const res = await fetch(`http://127.0.0.1:${p}/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        // A new session escapes the call's process group: once bash exits, the sleep is an orphan.
        // It waits for a file of this test's, so that it is still running when looked for, however loaded the machine.
        // bash waits until it is in its session: the call's end stops what is left in bash's group, and on a
        // loaded machine bash could exit before the child had run setsid, so the child went with the group.
        body: JSON.stringify({
          tool_uses: [
            {
              type: 'tool_use',
              id: 'toolu_orphan',
              name: 'Bash',
              input: { command: "setsid sh -c ': > started; until [ -e go ]; do sleep 0.05; done' </dev/null >/dev/null 2>&1 & until [ -e started ]; do sleep 0.01; done; echo $!" },
            },
          ],
        }),
      });
      const body = (await res.json()) as { tool_results: Array<{ content: string; is_error?: boolean }> };
      expect(body.tool_results[0]!.is_error ?? false).toBe(false);
      const orphan = Number(body.tool_results[0]!.content.trim());
      expect(orphan).toBeGreaterThan(1);
      // Reparented to the subreaper (tini), not to the host's init. Looked for until it is there: bash's
      // exit and the kernel's reparenting of its children are not one step, and a loaded machine may
      // answer the call in between. Its parent is named if it never comes.
      const ppidOf = (pid: number): string => {
        try {
          return /^PPid:\s*(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?';
        } catch {
          return 'gone';
        }
      };
      for (let i = 0; i < 200 && !childrenOf(tini).includes(orphan); i++) await new Promise((r) => setTimeout(r, 50));
      expect(childrenOf(tini), `the orphan's parent: ${ppidOf(orphan)}`).toContain(orphan);
      // Once it exits, tini waits for it: no zombie left in the process table.
      fs.writeFileSync(path.join(root, 'workspace', 'go'), '');
      for (let i = 0; i < 200 && fs.existsSync(`/proc/${orphan}`); i++) await new Promise((r) => setTimeout(r, 50));
      expect(fs.existsSync(`/proc/${orphan}`)).toBe(false);
      expect(childrenOf(tini)).not.toContain(orphan);
    } finally {
      proc.child.kill('SIGTERM');
    }
    // tini passes SIGTERM on and exits with node's code.
    expect(await proc.exited).toBe(0);
  });

  it('runs the compose pair: the example MCP server by its own command, and toolexec with the compose configuration', async () => {
    const everything = compose.services.everything!;
    const context = path.join(ROOT, typeof everything.build === 'string' ? everything.build : everything.build!.context);
    const mcpDf = readDockerfile(path.join(context, 'Dockerfile'));
    const mcpStage = mcpDf.stages.at(-1)!;
    const mcpPort = await freePort();
    // The MCP image installs the same package this checkout has as a devDependency: run it from here.
    const [mcpCmd, ...mcpArgs] = last(mcpStage, 'CMD')!.exec!;
    expect(mcpCmd).toBe('node');
    const mcp = spawnBin(mcpArgs, { command: [process.execPath], cwd: ROOT, env: cleanEnv({ ...envOf(mcpStage), ...everything.environment, PORT: String(mcpPort) }) });
    const configFile = path.join(root, 'compose-toolexec.json');
    const composeConfig = fs.readFileSync(path.join(ROOT, 'examples/compose/toolexec.json'), 'utf8');
    // Compose's service name resolves to the MCP container; here it is this machine's loopback.
    fs.writeFileSync(configFile, composeConfig.replace('http://everything:3001/', `http://127.0.0.1:${mcpPort}/`));
    const [cmd, ...args] = command(startCommand());
    let proc: Proc | undefined;
    try {
      await mcp.waitFor(/listening on port \d+/i);
      const p = await freePort();
      const portIndex = args.indexOf('--port') + 1;
      args[portIndex] = String(p);
      proc = spawnBin(args, { command: [cmd!], cwd: app, env: imageEnv({ TOOLEXEC_TOKEN: TOKEN, TOOLEXEC_CONFIG: configFile }) });
      await proc.waitFor(/listening on http:\/\/0\.0\.0\.0:\d+/);
      const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
      let state = '';
      for (let i = 0; i < 200 && state !== 'connected'; i++) {
        const servers = (await (await fetch(`http://127.0.0.1:${p}/mcp/servers`, { headers: auth })).json()) as { servers: Array<{ name: string; state: string }> };
        state = servers.servers.find((s) => s.name === 'everything')?.state ?? '';
        if (state !== 'connected') await new Promise((r) => setTimeout(r, 50));
      }
      expect(state).toBe('connected');
      // The compose configuration marks the server required: the instance is ready once it is connected.
      const [hcCmd, ...hcArgs] = command(last(runtime, 'HEALTHCHECK')!.exec!);
      const ready = await runBin([...hcArgs, '--ready', '--url', `http://127.0.0.1:${p}`], { command: [hcCmd!], cwd: app, env: imageEnv() });
      expect(ready).toMatchObject({ code: 0, stdout: '/readyz: ready\n' });
      const res = await fetch(`http://127.0.0.1:${p}/execute`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'toolu_echo', name: 'mcp__everything__echo', input: { message: 'through compose' } }] }),
      });
      const body = (await res.json()) as { tool_results: Array<{ content: unknown; is_error?: boolean }> };
      expect(body.tool_results[0]!.is_error ?? false).toBe(false);
      expect(JSON.stringify(body.tool_results[0]!.content)).toContain('Echo: through compose');
    } finally {
      proc?.child.kill('SIGTERM');
      mcp.child.kill('SIGTERM');
    }
    expect(await proc!.exited).toBe(0);
    await mcp.exited;
  });
});

describe('docker-compose.yml', () => {
  const toolexec = compose.services.toolexec!;
  const cmd = startCommand();

  it('builds toolexec from this Dockerfile, whose image brings its own init process, publishing the image port on loopback only', () => {
    expect(toolexec.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
    expect(fs.existsSync(path.join(ROOT, 'Dockerfile'))).toBe(true);
    expect(cmd.slice(0, 3)).toEqual(['/usr/bin/tini', '-s', '--']);
    expect(toolexec.ports).toEqual([`127.0.0.1:8787:${optionValue(cmd, '--port')}`]);
  });

  it('requires TOOLEXEC_TOKEN, and sets only variables the service reads', () => {
    const env = toolexec.environment!;
    expect(env.TOOLEXEC_TOKEN).toMatch(/^\$\{TOOLEXEC_TOKEN:\?.+\}$/);
    const sources = execFileSync('grep', ['-rhoE', 'env\\.TOOLEXEC_[A-Z_]+', path.join(ROOT, 'src')], { encoding: 'utf8' });
    for (const name of Object.keys(env)) expect(sources, `${name} is read by src/`).toContain(`env.${name}`);
  });

  it('mounts the data volume, the workspace and the configuration where the image and the service expect them', () => {
    // SOURCE:TARGET[:MODE], where SOURCE may hold ${VAR:-default}.
    const mounts = Object.fromEntries(
      toolexec.volumes!.map((v) => {
        const m = /^(.+):(\/[^:]*)(?::(ro|rw))?$/.exec(v)!;
        return [m[2]!, { source: m[1]!, mode: m[3] ?? 'rw' }];
      }),
    );
    expect(mounts[optionValue(cmd, '--data-dir')]).toEqual({ source: 'toolexec-data', mode: 'rw' });
    expect(JSON.parse(last(runtime, 'VOLUME')!.rest)).toEqual([optionValue(cmd, '--data-dir')]);
    expect(Object.keys(compose.volumes)).toEqual(['toolexec-data']);
    const workspace = mounts[optionValue(cmd, '--workspace')]!;
    expect(workspace.source).toBe('${TOOLEXEC_WORKSPACE:-./examples/compose/workspace}');
    expect(fs.statSync(path.join(ROOT, 'examples/compose/workspace')).isDirectory()).toBe(true);
    const config = mounts[toolexec.environment!.TOOLEXEC_CONFIG!]!;
    expect(config.mode).toBe('ro');
    const file = path.join(ROOT, config.source);
    const loaded = loadConfig({ configPath: file, env: {} });
    expect(loaded.warnings).toEqual([]);
  });

  it("points toolexec's MCP configuration at the MCP service's name and port, built from a pinned lock file", () => {
    const loaded = loadConfig({ configPath: path.join(ROOT, 'examples/compose/toolexec.json'), env: {} });
    const server = loaded.config.mcpServers.everything as { type: string; url: string; required?: boolean };
    const url = new URL(server.url);
    expect(url.hostname).toBe('everything');
    const everything = compose.services.everything!;
    expect(everything.environment?.PORT).toBe(url.port);
    expect(everything.expose).toEqual([url.port]);
    expect(toolexec.depends_on).toEqual({ everything: { condition: 'service_healthy' } });
    const context = path.join(ROOT, typeof everything.build === 'string' ? everything.build : everything.build!.context);
    const mcpDf = readDockerfile(path.join(context, 'Dockerfile'));
    const stage = mcpDf.stages.at(-1)!;
    expect(last(stage, 'EXPOSE')!.rest).toBe(url.port);
    expect(last(stage, 'CMD')!.exec).toEqual(['node', 'node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'streamableHttp']);
    expect(last(stage, 'HEALTHCHECK')!.exec?.[0]).toBe('node');
    const pkg = JSON.parse(fs.readFileSync(path.join(context, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const lock = JSON.parse(fs.readFileSync(path.join(context, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    const installed = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/package.json'), 'utf8')) as { version: string };
    expect(pkg.dependencies['@modelcontextprotocol/server-everything']).toBe(installed.version);
    expect(lock.packages['node_modules/@modelcontextprotocol/server-everything']?.version).toBe(installed.version);
  });
});
