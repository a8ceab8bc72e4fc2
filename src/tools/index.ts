/** The built-in tools, in no particular order (the pool sorts them). */
import type { AnyTool } from '../tool/types.js';
import { globTool } from './glob.js';
import { readTool } from './read.js';

export function builtinTools(): AnyTool[] {
  return [readTool, globTool];
}
