/** Loads a tool's model-facing description from the sibling `.md` file, once. */
import fs from 'node:fs';

export function loadPrompt(url: URL): string {
  return fs.readFileSync(url, 'utf8').trim();
}
