import type { ToolResultBlock } from './types.js';

/** A tool result's content as text: text blocks as they are, other blocks named (`[image]`). */
export function contentText(content: ToolResultBlock['content']): string {
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}
