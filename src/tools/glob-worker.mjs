// Glob's matcher for patterns that may backtrack (several wildcards in one
// path component): picomatch's RegExp for `*a*a*a*c` takes seconds per long
// name, so it runs here, where the main thread can end it, and never on the
// service's event loop. Posts the indices of the paths that match.

import { parentPort, workerData } from 'node:worker_threads';
import picomatch from 'picomatch';

/** @type {{ pattern: string, paths: string[] }} */
const job = workerData;
const isMatch = picomatch(job.pattern, { dot: false });
/** @type {number[]} */
const matched = [];
for (let i = 0; i < job.paths.length; i++) if (isMatch(/** @type {string} */ (job.paths[i]))) matched.push(i);
parentPort?.postMessage(matched);
