// Builds dist/ once: tests that run the CLI or a child service use the built
// files. Type errors do not stop the build here (`npm test` type-checks first).
import { spawnSync } from 'node:child_process';

export default function setup(): void {
  const r = spawnSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
  if (r.status !== 0) console.warn('global-setup: the build reported errors; tests that use dist/ may fail');
}
