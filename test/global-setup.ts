// Builds dist/ once: tests that run the CLI or a child service use the built files.
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
}
