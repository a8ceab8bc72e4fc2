/** The built-in tools, in no particular order (the pool sorts them). */
import type { AnyTool } from '../tool/types.js';
import { bashTool } from './bash.js';
import { editTool } from './edit.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { notebookEditTool } from './notebook-edit.js';
import { readTool } from './read.js';
import { taskOutputTool } from './task-output.js';
import { taskStopTool } from './task-stop.js';
import { todoWriteTool } from './todo-write.js';
import { toolSearchTool } from './tool-search.js';
import { webFetchTool } from './web-fetch.js';
import { writeTool } from './write.js';

export function builtinTools(): AnyTool[] {
  return [readTool, globTool, grepTool, bashTool, editTool, writeTool, notebookEditTool, todoWriteTool, webFetchTool, toolSearchTool, taskOutputTool, taskStopTool];
}
