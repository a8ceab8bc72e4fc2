/**
 * Grep test helpers: the fixture corpus copied into a temp dir (with the
 * parts a fixture cannot hold put in place: `_gitignore` becomes
 * `.gitignore`, a `_git` marker a `.git` directory, `X.ts.fixture` becomes
 * `X.ts`) and fixed modification times, and apps that run Grep with either
 * engine forced.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { ConfigInput } from '../src/config/schema.js';
import { grepTool } from '../src/tools/grep.js';
import { execute, makeApp, textOf, tmpDir, use, type TestApp } from './helpers.js';

export const CORPUS = fileURLToPath(new URL('./fixtures/grep-corpus', import.meta.url));

/** 2024-01-01T00:00:00Z; files get this plus a few minutes, with deliberate ties. */
export const BASE_MTIME_S = 1_704_067_200;

function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listFiles(dir, r));
    else out.push(r);
  }
  return out;
}

/** A fresh copy of the corpus; returns its (canonical) root. */
export function makeCorpus(): string {
  const root = path.join(tmpDir('grep-corpus-'), 'corpus');
  fs.cpSync(CORPUS, root, { recursive: true });
  for (const rel of listFiles(root)) {
    const abs = path.join(root, rel);
    const base = path.basename(rel);
    if (base === '_gitignore') fs.renameSync(abs, path.join(path.dirname(abs), '.gitignore'));
    // TypeScript sources are stored as X.ts.fixture so that tsc and vitest leave them alone.
    if (base.endsWith('.fixture')) fs.renameSync(abs, abs.slice(0, -'.fixture'.length));
    if (base === '_git') {
      fs.rmSync(abs);
      fs.mkdirSync(path.join(path.dirname(abs), '.git'));
      fs.writeFileSync(path.join(path.dirname(abs), '.git', 'HEAD'), 'ref: refs/heads/main\nTODO not searched: .git is excluded\n');
    }
  }
  // Every file gets one of seven times: newest-first order has ties, broken by walk order.
  listFiles(root)
    .sort()
    .forEach((rel, i) => {
      const t = BASE_MTIME_S + (i % 7) * 60;
      fs.utimesSync(path.join(root, rel), t, t);
    });
  return root;
}

export async function grepApp(workspace: string, engine: 'rg' | 'js', config: ConfigInput = {}, env?: NodeJS.ProcessEnv): Promise<TestApp> {
  return makeApp(
    { ...config, workspace: { ...(config.workspace ?? {}), root: workspace }, grep: { engine }, permissions: { allow: ['Grep'], ...(config.permissions ?? {}) } },
    { extraTools: [grepTool], ...(env ? { env } : {}) },
  );
}

/**
 * The installed rg behind a script that first writes its arguments (one line per run) to a log: an app
 * given `env` searches with the real rg, and a test can tell that rg, not the JS engine, answered.
 */
export interface RgRuns {
  env: NodeJS.ProcessEnv;
  /** The runs since the last call, each its arguments joined by spaces. */
  take(): string[];
}

export function loggedRg(): RgRuns {
  const realRg = execFileSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).trim();
  const bin = tmpDir('rg-runs-');
  const log = path.join(bin, 'runs.log');
  fs.writeFileSync(path.join(bin, 'rg'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realRg}' "$@"\n`, { mode: 0o755 });
  let seen = 0;
  return {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    take() {
      const runs = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l.length > 0) : [];
      const fresh = runs.slice(seen);
      seen = runs.length;
      return fresh;
    },
  };
}

/** Whether one of `runs` was rg searching with -U (not the listing of files with a long line, a plain search). */
export const ranMultiline = (runs: string[]): boolean => runs.some((r) => r.split(' ').includes('--multiline'));

export interface GrepCall {
  text: string;
  isError: boolean;
  errorClass: string | null;
  status: string;
}

export async function runGrep(app: FastifyInstance, input: Record<string, unknown>, sessionId = 'grep-test'): Promise<GrepCall> {
  const r = await execute(app, { session_id: sessionId, tool_uses: [use('Grep', input)] });
  const block = r.body.tool_results[0]!;
  const ex = r.body.executions[0]!;
  return { text: textOf(block.content), isError: block.is_error === true, errorClass: ex.error_class, status: ex.status };
}
