// Types of file-scan.mjs (see there).
import type { Buffer } from 'node:buffer';

export declare const BINARY_SNIFF_BYTES: number;
export declare const MAX_FILE_BYTES: number;
export declare const MAX_LINE_BYTES: number;
export declare const DISPLAY_MAX_CHARS: number;

/** [line number (1-based), text as shown, whether the line matched] */
export type ShownLine = [number, string, boolean];

export declare function readRegularFile(file: string, max: number): Buffer | undefined;
export declare function isBinaryHead(head: Uint8Array): boolean;
export declare function decodeText(buf: Buffer): string;
export declare function isLongLine(line: string): boolean;
export declare function displayLine(line: string): string;
export declare function splitLines(text: string): string[];
export declare function assembleLines(
  matched: readonly number[],
  before: number,
  after: number,
  getLine: (n: number) => string | undefined,
): ShownLine[];

export interface SearchSpec {
  line: RegExp;
  whole: RegExp | undefined;
  mode: 'files' | 'count' | 'content';
  before: number;
  after: number;
}
export declare function searchText(text: string, spec: SearchSpec): { count: number; lines: ShownLine[] | undefined } | undefined;
