/**
 * What the container tests need without a Docker engine: a reader for the
 * Dockerfile's instructions, the runtime stage reproduced in a temp dir
 * (production dependencies only), and a YAML parser.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from './helpers-cli.js';

export interface Instruction {
  op: string;
  /** The text after the instruction word, continuations joined. */
  raw: string;
  /** `--name=value` flags before the arguments (COPY --from, HEALTHCHECK --interval). */
  flags: Record<string, string>;
  /** The arguments after the flags. */
  rest: string;
  /** The exec form (`["node", …]`) when the arguments are a JSON array. */
  exec?: string[];
}

export interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  args: Record<string, string>;
  stages: Stage[];
  stage(name: string): Stage;
}

function splitFlags(text: string): { flags: Record<string, string>; rest: string } {
  const flags: Record<string, string> = {};
  let rest = text.trim();
  for (;;) {
    const m = /^--([\w-]+)=(\S+)\s*/.exec(rest);
    if (!m) break;
    flags[m[1]!] = m[2]!;
    rest = rest.slice(m[0].length);
  }
  return { flags, rest };
}

function execForm(text: string): string[] | undefined {
  if (!text.startsWith('[')) return undefined;
  const v = JSON.parse(text) as unknown;
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}

export function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (current === '' && (t === '' || t.startsWith('#'))) continue;
    if (t.startsWith('#')) continue;
    if (t.endsWith('\\')) {
      current += `${t.slice(0, -1)} `;
      continue;
    }
    logical.push((current + t).trim());
    current = '';
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  const subst = (s: string): string => s.replace(/\$\{(\w+)\}/g, (_, n: string) => args[n] ?? '');
  for (const l of logical) {
    const m = /^(\w+)\s+([\s\S]*)$/.exec(l);
    if (!m) continue;
    const op = m[1]!.toUpperCase();
    const raw = m[2]!;
    if (op === 'ARG' && stages.length === 0) {
      const [k, v = ''] = raw.split('=');
      args[k!.trim()] = v.trim().replace(/^"|"$/g, '');
      continue;
    }
    if (op === 'FROM') {
      const f = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(raw.trim());
      stages.push({ from: subst(f![1]!), name: f![2] ?? String(stages.length), instructions: [] });
      continue;
    }
    const { flags, rest } = splitFlags(raw);
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${op} before FROM`);
    const body = op === 'HEALTHCHECK' ? rest.replace(/^CMD\s+/, '') : rest;
    stage.instructions.push({ op, raw, flags, rest: body, exec: execForm(body) });
  }
  return {
    args,
    stages,
    stage(name) {
      const s = stages.find((x) => x.name === name);
      if (!s) throw new Error(`no stage ${name}`);
      return s;
    },
  };
}

/** The stages a stage is built on, base first (`FROM toolchain AS build`), itself last. */
function lineage(df: Dockerfile, stage: Stage): Stage[] {
  const parent = df.stages.find((s) => s.name === stage.from && s !== stage);
  return parent ? [...lineage(df, parent), stage] : [stage];
}

/** ENV instructions of a stage, inherited ones included, as a map (`ENV A=1 B=2`). */
export function envOf(stage: Stage, df?: Dockerfile): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of (df ? lineage(df, stage) : [stage]).flatMap((s) => s.instructions).filter((x) => x.op === 'ENV')) {
    for (const m of i.rest.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
  }
  return env;
}

export function last(stage: Stage, op: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.op === op).at(-1);
}

/** The stage's working directory, inherited from the stage it is built on when it sets none. */
export function workdirOf(stage: Stage, df?: Dockerfile): string {
  for (const s of (df ? lineage(df, stage) : [stage]).reverse()) {
    const w = last(s, 'WORKDIR');
    if (w) return w.rest;
  }
  return '/';
}

export function readDockerfile(file = path.join(ROOT, 'Dockerfile')): Dockerfile {
  return parseDockerfile(fs.readFileSync(file, 'utf8'));
}

/** js-yaml, present in node_modules (through @apidevtools/swagger-parser); it ships no types. */
export const yaml = createRequire(import.meta.url)('js-yaml') as { load(s: string): unknown; loadAll(s: string): unknown[] };

/** The exit status and output of `npm ci … --dry-run` against this checkout's lock file. */
export function npmCiDryRun(): { status: number | null; output: string } {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'toolexec-npmci-'));
  try {
    for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(ROOT, f), path.join(dir, f));
    const r = spawnSync('npm', ['ci', '--dry-run', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The runtime stage of the Dockerfile in `dir` (standing for its WORKDIR):
 * each COPY of the runtime stage done from where that stage's source is here
 * — the build stage's output is this checkout's dist/ (built by
 * global-setup), the deps stage's node_modules a production install made
 * here with the deps stage's own flags. better-sqlite3's addon is taken from
 * this checkout's build instead of being compiled again (same package
 * version, same Node): `npm rebuild better-sqlite3` is what the image runs.
 */
export function reproduceRuntime(df: Dockerfile, dir: string): { notes: string[] } {
  const notes: string[] = [];
  const runtime = df.stage('runtime');
  const deps = df.stage('deps');
  const workdir = workdirOf(runtime, df);
  const depsDir = path.join(dir, '.deps-stage');
  fs.mkdirSync(depsDir, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(ROOT, f), path.join(depsDir, f));
  const ci = deps.instructions.find((i) => i.op === 'RUN' && /npm ci\b/.test(i.rest));
  if (!ci) throw new Error('the deps stage runs no npm ci');
  const flags = /npm ci((?:\s+--[\w=-]+)*)/.exec(ci.rest)![1]!.trim().split(/\s+/).filter(Boolean);
  const extra = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
  const install = spawnSync('npm', ['ci', ...flags, ...extra], { cwd: depsDir, encoding: 'utf8', timeout: 300_000 });
  if (install.status !== 0) {
    // An out-of-sync lock file has its own test; the runtime is still checked with the lock as it is.
    if (!/can only install packages when your package\.json and package-lock\.json/.test(install.stderr)) {
      throw new Error(`npm ci ${flags.join(' ')} failed: ${install.stderr.slice(-3000)}`);
    }
    notes.push('npm ci refused the lock file; installed with npm install and the same flags instead');
    execFileSync('npm', ['install', ...flags, ...extra], { cwd: depsDir, encoding: 'utf8', timeout: 300_000 });
  }
  const addon = path.join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  fs.mkdirSync(path.dirname(path.join(depsDir, addon)), { recursive: true });
  fs.copyFileSync(path.join(ROOT, addon), path.join(depsDir, addon));

  const stageRoot: Record<string, { dir: string; workdir: string }> = {
    build: { dir: ROOT, workdir: workdirOf(df.stage('build'), df) },
    deps: { dir: depsDir, workdir: workdirOf(deps, df) },
  };
  for (const c of runtime.instructions.filter((i) => i.op === 'COPY')) {
    const parts = c.rest.split(/\s+/);
    const dest = parts.pop()!;
    const to = path.resolve(dir, path.relative(workdir, path.resolve(workdir, dest)));
    for (const src of parts) {
      const from = c.flags.from;
      const origin = from ? path.join(stageRoot[from]!.dir, path.relative(stageRoot[from]!.workdir, src)) : path.join(ROOT, src);
      const target = dest.endsWith('/') && !fs.statSync(origin).isDirectory() ? path.join(to, path.basename(src)) : to;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      // The install is ours to move (same file system): no copy of 100 MB.
      if (from === 'deps') fs.renameSync(origin, target);
      else fs.cpSync(origin, target, { recursive: true, verbatimSymlinks: true });
    }
  }
  fs.rmSync(depsDir, { recursive: true, force: true });
  return { notes };
}
