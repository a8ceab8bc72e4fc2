import { readFileSync } from 'node:fs';

export function greeting() {
  return readFileSync(new URL('../greeting.txt', import.meta.url), 'utf8').trim();
}
