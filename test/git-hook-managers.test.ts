/**
 * The hook frameworks whose hook reads the commands it runs from a file of
 * the work tree (git-hooks.ts): lefthook, husky 4, and lint-staged run by a
 * hook (husky 9's `.husky/pre-commit`, a simple-git-hooks hook, a lefthook
 * configuration). Each is found by the text of the hook it installs; once a
 * hook of the repository runs one, writing its configuration asks, as writing
 * the hook would, in acceptEdits and bypassPermissions; without such a hook
 * the same files are files like any other. Real repositories (the git
 * binary), the hooks as the frameworks write them, the real checks and service.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPathPermission } from '../src/permissions/filesystem.js';
import { bashServiceTests, BYPASS, ruleEnv, type RuleEnvOptions } from './helpers-bash.js';
import { directContext } from './helpers-files.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
}

/** lefthook 1.x's hook (`lefthook install`), shortened where it only looks for the binary. */
const LEFTHOOK_1 = `#!/bin/sh

if [ "$LEFTHOOK_VERBOSE" = "1" -o "$LEFTHOOK_VERBOSE" = "true" ]; then
  set -x
fi

if [ "$LEFTHOOK" = "0" ]; then
  exit 0
fi

call_lefthook()
{
  if test -n "$LEFTHOOK_BIN"
  then
    "$LEFTHOOK_BIN" "$@"
  elif lefthook -h >/dev/null 2>&1
  then
    lefthook "$@"
  else
    dir="$(git rev-parse --show-toplevel)"
    "$dir/node_modules/lefthook/bin/index.js" "$@"
  fi
}

call_lefthook run "pre-commit" "$@"
`;

/** lefthook 2.x's hook. */
const LEFTHOOK_2 = `#!/bin/sh

if [ "$LEFTHOOK" = "0" ]; then
  exit 0
fi

call_lefthook()
{
  dir="$(git rev-parse --show-toplevel)"
  if lefthook -h >/dev/null 2>&1
  then
    eval lefthook $@
  elif test -f "$dir/node_modules/lefthook/bin/index.js"
  then
    eval "\\"$dir/node_modules/lefthook/bin/index.js\\" $@"
  else
    echo "Can't find lefthook in PATH"
  fi
}

call_lefthook "run pre-commit $@"
`;

/** husky 4's hook (in .git/hooks), which runs what package.json's "husky" section or .huskyrc names. */
const HUSKY_4 = `#!/bin/sh
# husky

# Created by Husky v4.3.8 (https://github.com/typicode/husky#readme)
#   At: 1/2/2021, 10:00:00 AM
#   From: /w/node_modules/husky (https://github.com/typicode/husky#readme)

. "$(dirname "$0")/husky.sh"
`;

/** A simple-git-hooks hook: the command of package.json's section, copied in when it was run. */
const simpleGitHooks = (command: string): string => `#!/bin/sh

if [ "$SKIP_SIMPLE_GIT_HOOKS" = "1" ]; then
    echo "[INFO] SKIP_SIMPLE_GIT_HOOKS is set to 1, skipping hook."
    exit 0
fi

if [ -f "$SIMPLE_GIT_HOOKS_RC" ]; then
    . "$SIMPLE_GIT_HOOKS_RC"
fi

${command}
`;

/** husky 8's user hook (core.hooksPath .husky): it sources `_/husky.sh`, not husky 4's. */
const husky8 = (command: string): string => `#!/usr/bin/env sh\n. "$(dirname -- "$0")/_/husky.sh"\n\n${command}\n`;

/** A repository in `ws` with a package.json, a source file and lefthook's, lint-staged's and husky 4's configurations, none run yet. */
function repository(ws: string): void {
  git(ws, 'init', '-q');
  fs.writeFileSync(path.join(ws, 'package.json'), '{\n  "name": "app",\n  "version": "1.0.0"\n}\n');
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src', 'app.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(ws, 'lefthook.yml'), 'pre-commit:\n  commands:\n    lint:\n      run: npx eslint {staged_files}\n');
  fs.writeFileSync(path.join(ws, '.lintstagedrc'), '{ "*.ts": "eslint --fix" }\n');
  fs.writeFileSync(path.join(ws, '.huskyrc'), '{ "hooks": { "pre-commit": "npm test" } }\n');
}

/** A hook installed in .git/hooks, as the framework writes it. */
function installHook(ws: string, text: string, name = 'pre-commit'): void {
  fs.writeFileSync(path.join(ws, '.git', 'hooks', name), text, { mode: 0o755 });
}

/** The Bash check, and the Write check of a path below the workspace (its detail when it asks, else its behaviour). */
function env(opts: RuleEnvOptions = { mode: 'acceptEdits' }) {
  const e = ruleEnv(opts);
  repository(e.ws);
  const ctx = { ...directContext({ root: e.ws, mode: opts.mode ?? 'default' }), childEnv: process.env };
  const write = (rel: string): string => {
    const r = checkPathPermission('edit', 'Write', path.join(ctx.workspace.root, rel), ctx);
    return r.behavior === 'ask' ? `ask: ${r.detail}` : r.behavior;
  };
  const bash = async (c: string): Promise<string> => {
    const r = await e.check(c);
    return r.behavior === 'ask' ? `ask: ${r.detail}` : r.behavior;
  };
  return { ...e, write, bash };
}

const RUNS = (runner: string): RegExp => new RegExp(`configuration ${runner} reads the commands it runs from, as the hook .* runs it`);

describe('lefthook', () => {
  for (const [version, hook] of [['1.x', LEFTHOOK_1], ['2.x', LEFTHOOK_2]] as const) {
    it(`${version}: its configurations, and the scripts directory, ask once its hook is installed; not before`, async () => {
      const e = env();
      const files = ['lefthook.yml', '.lefthook.yml', 'lefthook-local.yml', '.lefthook-local.yaml', '.config/lefthook.yml', '.config/lefthook-local.toml', 'lefthook.json', 'lefthook.jsonc'];
      for (const f of files) expect(e.write(f), f).toBe('allow');
      expect(await e.bash('echo x >> lefthook.yml')).toBe('allow');
      installHook(e.ws, hook);
      for (const f of files) expect(e.write(f), f).toMatch(RUNS('lefthook'));
      for (const c of [
        'echo "  evil: {run: touch pwned}" >> lefthook.yml',
        'sed -i s/eslint/sh/ lefthook.yml',
        'cp src/app.ts lefthook-local.yml',
        'echo x | tee .lefthook-local.yml',
        'mv src/app.ts .config/lefthook.yaml',
        'rm -rf .config',
        'cp -l lefthook.yml notes.txt',
        'mkdir -p .lefthook/pre-commit && echo "touch pwned" > .lefthook/pre-commit/x.sh',
        'echo x > .lefthook-local/pre-commit/y.sh',
      ]) {
        expect(await e.bash(c), c).toMatch(/^ask: .*lefthook/);
      }
      for (const f of ['.lefthook/pre-commit/x.sh', '.lefthook']) expect(e.write(f), f).toMatch(/where lefthook finds the scripts it runs/);
      // Other files are the mode's to allow.
      expect(e.write('src/app.ts')).toBe('allow');
      expect(e.write('package.json')).toBe('allow');
      expect(e.write('.lintstagedrc')).toBe('allow');
      expect(await e.bash('echo x > src/app.ts && cp src/app.ts src/b.ts')).toBe('allow');
    });
  }

  it("the files its configuration extends, its source_dir, and $LEFTHOOK_CONFIG's file ask too", async () => {
    const e = env();
    installHook(e.ws, LEFTHOOK_2, 'pre-push');
    fs.writeFileSync(path.join(e.ws, 'lefthook.yml'), 'extends:\n  - ci/shared.yml\n  # a comment\n  - "ci/more.yml"\nsource_dir: tools/hooks\n');
    fs.writeFileSync(path.join(e.ws, '.lefthook-local.json'), '{ "extends": ["local/a.json", "shared/*.yml"] }\n');
    fs.mkdirSync(path.join(e.ws, 'ci'));
    fs.writeFileSync(path.join(e.ws, 'ci', 'shared.yml'), 'extends: [ci/deeper.yml]\n');
    for (const f of ['ci/shared.yml', 'ci/more.yml', 'ci/deeper.yml', 'local/a.json', 'shared/x.yml']) expect(e.write(f), f).toMatch(RUNS('lefthook'));
    expect(e.write('tools/hooks/pre-push/check.sh')).toMatch(/where lefthook finds the scripts it runs/);
    expect(e.write('ci/notes.md')).toBe('allow');
    // A usual name that is a link: the file it leads to is the configuration.
    fs.writeFileSync(path.join(e.ws, 'ci', 'main.yml'), 'pre-push: {}\n');
    expect(e.write('ci/main.yml')).toBe('allow');
    fs.symlinkSync('ci/main.yml', path.join(e.ws, 'lefthook.yaml'));
    expect(e.write('ci/main.yml')).toMatch(RUNS('lefthook'));
    expect(e.write('shared/x.md')).toBe('allow');
    // A hook installed with `rc: .lefthookrc` sources it.
    expect(e.write('.lefthookrc')).toBe('allow');
    installHook(e.ws, LEFTHOOK_2.replace('call_lefthook()', 'set -a\n[ -f .lefthookrc ] && . .lefthookrc\n\ncall_lefthook()'), 'pre-push');
    expect(e.write('.lefthookrc')).toMatch(RUNS('lefthook'));
    const saved = process.env.LEFTHOOK_CONFIG;
    process.env.LEFTHOOK_CONFIG = 'conf/hooks.yml';
    try {
      expect(e.write('conf/hooks.yml')).toMatch(RUNS('lefthook'));
    } finally {
      if (saved === undefined) delete process.env.LEFTHOOK_CONFIG;
      else process.env.LEFTHOOK_CONFIG = saved;
    }
    expect(e.write('conf/hooks.yml')).toBe('allow');
  });
});

describe('lint-staged run by a hook', () => {
  const LINT_STAGED = ['.lintstagedrc', '.lintstagedrc.json', 'lint-staged.config.js', 'lint-staged.config.mjs', 'package.json', 'packages/a/package.json', 'packages/a/.lintstagedrc.yml'];

  it('husky 9 (.husky/pre-commit runs it): its configurations ask, package.json included; without it they do not', async () => {
    for (const mode of ['acceptEdits', BYPASS.defaultMode] as const) {
      const e = env({ mode });
      git(e.ws, 'config', 'core.hooksPath', '.husky/_');
      fs.mkdirSync(path.join(e.ws, '.husky', '_'), { recursive: true });
      fs.writeFileSync(path.join(e.ws, '.husky', '_', 'pre-commit'), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n', { mode: 0o755 });
      fs.writeFileSync(path.join(e.ws, '.husky', 'pre-commit'), 'npm test\n');
      for (const f of LINT_STAGED) expect(e.write(f), `${mode}: ${f}`).not.toMatch(/^ask/);
      expect(await e.bash('echo x > package.json')).not.toMatch(/^ask/);
      fs.writeFileSync(path.join(e.ws, '.husky', 'pre-commit'), 'npm test\nnpx lint-staged\n');
      for (const f of LINT_STAGED) expect(e.write(f), `${mode}: ${f}`).toMatch(RUNS('lint-staged'));
      for (const c of ['echo "{}" > package.json', 'sed -i s/app/x/ package.json', 'cp src/app.ts .lintstagedrc.cjs', 'echo x | tee packages/b/lint-staged.config.ts']) {
        expect(await e.bash(c), `${mode}: ${c}`).toMatch(/^ask: .*lint-staged/);
      }
      // Not a configuration: another name, or below node_modules (git ignores it, lint-staged does not look there).
      for (const f of ['src/app.ts', 'package-lock.json', 'node_modules/x/package.json', 'docs/package.json.md']) expect(e.write(f), f).not.toMatch(/^ask/);
    }
  });

  it('a simple-git-hooks hook that runs it: package.json asks; one that does not: package.json (its section too) is an ordinary file', async () => {
    const e = env();
    installHook(e.ws, simpleGitHooks('npm test'));
    expect(e.write('package.json')).toBe('allow');
    expect(e.write('.lintstagedrc')).toBe('allow');
    installHook(e.ws, simpleGitHooks('npx lint-staged --config .config/ls.json'));
    for (const f of [...LINT_STAGED, '.config/ls.json']) expect(e.write(f), f).toMatch(RUNS('lint-staged'));
  });

  it('named in a configuration a hook runs (lefthook.yml, .pre-commit-config.yaml)', async () => {
    const e = env();
    installHook(e.ws, LEFTHOOK_1);
    expect(e.write('package.json')).toBe('allow');
    fs.writeFileSync(path.join(e.ws, 'lefthook.yml'), 'pre-commit:\n  commands:\n    staged:\n      run: npx lint-staged\n');
    expect(e.write('package.json')).toMatch(RUNS('lint-staged'));
    const p = env();
    installHook(p.ws, '#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\n');
    expect(p.write('.lintstagedrc')).toBe('allow');
    fs.writeFileSync(path.join(p.ws, '.pre-commit-config.yaml'), 'repos:\n- repo: local\n  hooks:\n  - id: ls\n    name: ls\n    entry: npx lint-staged\n    language: system\n');
    expect(p.write('.lintstagedrc')).toMatch(RUNS('lint-staged'));
  });
});

describe('husky', () => {
  it("husky 4's hook: package.json and .huskyrc ask; husky 8's hook (it sources _/husky.sh) makes neither ask", async () => {
    const e = env();
    installHook(e.ws, HUSKY_4);
    for (const f of ['package.json', '.huskyrc', '.huskyrc.json', 'husky.config.js']) expect(e.write(f), f).toMatch(RUNS('husky 4'));
    expect(await e.bash('echo x > .huskyrc.js')).toMatch(/^ask: .*husky 4/);
    expect(e.write('src/app.ts')).toBe('allow');
    const h8 = env();
    git(h8.ws, 'config', 'core.hooksPath', '.husky');
    fs.mkdirSync(path.join(h8.ws, '.husky'));
    fs.writeFileSync(path.join(h8.ws, '.husky', 'pre-commit'), husky8('npm test'), { mode: 0o755 });
    for (const f of ['package.json', '.huskyrc']) expect(h8.write(f), f).toBe('allow');
    // Its hook itself is in the hooks directory.
    expect(h8.write('.husky/pre-commit')).toMatch(/where git's hooks are/);
  });
});

describe('through the service', () => {
  it('acceptEdits: Write, Edit, NotebookEdit and Bash of what lefthook and lint-staged run ask, and leave the files as they were', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', headless: 'deny', allow: ['Bash(echo:*)', 'Bash(cp:*)', 'Bash(git:*)'] } });
    const ws = t.workspace;
    repository(ws);
    fs.writeFileSync(path.join(ws, 'lefthook.yml'), 'pre-commit:\n  commands:\n    staged:\n      run: npx lint-staged\n');
    installHook(ws, LEFTHOOK_2);
    fs.mkdirSync(path.join(ws, '.lefthook', 'pre-commit'), { recursive: true });
    const nb = { cells: [{ cell_type: 'code', id: 'a', source: 'print(1)', metadata: {}, outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 5 };
    fs.writeFileSync(path.join(ws, '.lefthook', 'pre-commit', 'nb.ipynb'), JSON.stringify(nb));
    const before = new Map(['lefthook.yml', 'package.json', '.lintstagedrc'].map((f) => [f, fs.readFileSync(path.join(ws, f), 'utf8')]));
    for (const f of [...before.keys(), '.lefthook/pre-commit/nb.ipynb']) expect((await run(t, 'Read', { file_path: f })).exec.status).toBe('succeeded');
    for (const [tool, input] of [
      ['Edit', { file_path: path.join(ws, 'lefthook.yml'), old_string: 'npx lint-staged', new_string: 'touch pwned' }],
      ['Write', { file_path: 'lefthook-local.yml', content: 'pre-commit:\n  commands:\n    x:\n      run: touch pwned\n' }],
      ['Edit', { file_path: path.join(ws, 'package.json'), old_string: '"version": "1.0.0"', new_string: '"version": "1.0.0",\n  "lint-staged": { "*": "touch pwned" }' }],
      ['Write', { file_path: '.lintstagedrc', content: '{ "*": "touch pwned" }\n' }],
      ['NotebookEdit', { notebook_path: path.join(ws, '.lefthook', 'pre-commit', 'nb.ipynb'), new_source: 'x', cell_id: 'a' }],
      ['Bash', { command: 'echo "{}" > .lintstagedrc' }],
      ['Bash', { command: 'cp src/app.ts .lefthook.yml' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const r = await run(t, tool, input);
      expect(r.exec.status, `${tool} ${JSON.stringify(input)}`).toBe('denied');
      expect(r.chain.map((c) => c.detail).join('\n'), `${tool} ${JSON.stringify(input)}`).toMatch(/(lefthook|lint-staged) (reads the commands|finds the scripts)/);
    }
    for (const [f, text] of before) expect(fs.readFileSync(path.join(ws, f), 'utf8'), f).toBe(text);
    for (const f of ['lefthook-local.yml', '.lefthook.yml']) expect(fs.existsSync(path.join(ws, f)), f).toBe(false);
    // The project's own files are the mode's to allow.
    expect((await run(t, 'Read', { file_path: 'src/app.ts' })).exec.status).toBe('succeeded');
    expect((await run(t, 'Edit', { file_path: path.join(ws, 'src', 'app.ts'), old_string: '1', new_string: '2' })).exec.status).toBe('succeeded');
    expect((await run(t, 'Bash', { command: 'echo x > src/other.ts' })).exec.status).toBe('succeeded');
  }, 20000);

  it('without a hook that runs them, lefthook.yml, package.json and .lintstagedrc are written in acceptEdits', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', headless: 'deny', allow: ['Bash(echo:*)'] } });
    const ws = t.workspace;
    repository(ws);
    installHook(ws, simpleGitHooks('npm test'));
    for (const f of ['lefthook.yml', 'package.json', '.lintstagedrc']) expect((await run(t, 'Read', { file_path: f })).exec.status).toBe('succeeded');
    expect((await run(t, 'Edit', { file_path: path.join(ws, 'package.json'), old_string: '1.0.0', new_string: '1.0.1' })).exec.status).toBe('succeeded');
    expect((await run(t, 'Write', { file_path: 'lefthook.yml', content: 'x: 1\n' })).exec.status).toBe('succeeded');
    expect((await run(t, 'Bash', { command: 'echo "{}" > .lintstagedrc' })).exec.status).toBe('succeeded');
    expect(fs.readFileSync(path.join(ws, 'package.json'), 'utf8')).toContain('1.0.1');
  });
});
