// npm run bench: every benchmark, each against its baseline measured in the
// same run; results land in bench/results/*.json. `npm run bench -- http`
// runs one. BENCH_QUICK=1 runs a reduced version (CI).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { benchDir } from './lib.mjs';
import { pipelineBench } from './pipeline.bench.mjs';
import { httpBench } from './http.bench.mjs';
import { orchestrationBench } from './orchestration.bench.mjs';
import { largeResultBench } from './large-result.bench.mjs';
import { catalogBench } from './catalog.bench.mjs';
import { coldStartBench } from './cold-start.bench.mjs';
import { spawnBench } from './spawn.bench.mjs';
import { grepBench } from './grep.bench.mjs';

// Scripts that run as their own process (they start servers of their own).
const script = (file) => () => {
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(benchDir, file)], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) throw new Error(`${file} failed (${r.status})`);
};

const benches = {
  http: httpBench,
  pipeline: pipelineBench,
  permission: script('permission.bench.mjs'),
  mcp: script('mcp.bench.mjs'),
  orchestration: orchestrationBench,
  'large-result': largeResultBench,
  catalog: catalogBench,
  'cold-start': coldStartBench,
  spawn: spawnBench,
  grep: grepBench,
  observability: script('observability.bench.mjs'),
  'git-rewrite': script('git-rewrite.bench.mjs'),
};
const only = process.argv[2];
if (only && !benches[only]) {
  console.error(`unknown benchmark ${only}; one of: ${Object.keys(benches).join(', ')}`);
  process.exit(2);
}
for (const [name, fn] of Object.entries(benches)) {
  if (only && only !== name) continue;
  await fn();
}

// The summary, from the results on disk (each bench wrote its own).
const { reportMarkdown } = await import('./report.mjs');
console.log('\nSummary (npm run bench:report -- --write puts it in the README):\n');
console.log(reportMarkdown());
