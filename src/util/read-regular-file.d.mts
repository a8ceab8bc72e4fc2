// Types of read-regular-file.mjs (see there).
import type { Buffer } from 'node:buffer';

export declare function readRegular(file: string, maxBytes: number, how: 'head' | 'whole' | 'to-end'): Buffer;
