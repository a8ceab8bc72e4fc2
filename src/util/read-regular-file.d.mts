// Types of read-regular-file.mjs (see there).
import type { Buffer } from 'node:buffer';
import type fs from 'node:fs';

export declare function readRegular(file: string, maxBytes: number, how: 'head' | 'whole' | 'to-end', readAs?: (st: fs.Stats) => void): Buffer;
