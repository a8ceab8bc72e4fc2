/** Every error code is documented in docs/errors.md with its status, and only those. */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';

describe('error codes', () => {
  const doc = fs.readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map([...doc.matchAll(/^\| `(TOOLEXEC_ERR_[A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));

  it('documents every code with its HTTP status', () => {
    for (const [code, v] of Object.entries(ERROR_CODES)) expect(rows.get(code), code).toBe(v.status);
  });

  it('documents no code that does not exist', () => {
    for (const code of rows.keys()) expect(Object.keys(ERROR_CODES)).toContain(code);
  });

  it('names every code TOOLEXEC_ERR_<AREA>_<REASON>', () => {
    for (const code of Object.keys(ERROR_CODES)) expect(code).toMatch(/^TOOLEXEC_ERR_[A-Z]+(_[A-Z]+)*$/);
  });
});
