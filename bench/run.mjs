// npm run bench: every benchmark, each against its baseline measured in the
// same run. BENCH_QUICK=1 runs a reduced version (CI).
import { pipelineBench } from './pipeline.bench.mjs';
import { httpBench } from './http.bench.mjs';

const only = process.argv[2];
const benches = { pipeline: pipelineBench, http: httpBench };
for (const [name, fn] of Object.entries(benches)) {
  if (only && only !== name) continue;
  await fn();
}
