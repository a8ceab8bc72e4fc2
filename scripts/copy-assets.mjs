// Copies the non-TypeScript files under src/ (tool prompts, console assets) into dist/.
import fs from 'node:fs';
import path from 'node:path';

const src = path.resolve('src');
const dist = path.resolve('dist');
function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (!/\.(ts|tsx)$/.test(e.name)) {
      const to = path.join(dist, path.relative(src, p));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(p, to);
    }
  }
}
walk(src);

// The `toolexec` bin (package.json "bin"): tsc keeps its shebang line but not an executable mode.
const cli = path.join(dist, 'cli.js');
if (fs.existsSync(cli)) fs.chmodSync(cli, 0o755);
