/** Every error code is documented in docs/errors.md with its status, and only those. */
import fs from 'node:fs';
import path from 'node:path';
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

/** No code is used outside the table (a raw body would bypass it), and the OpenAPI document lists exactly the table's. */
describe('error codes where they are used', () => {
  const root = new URL('../', import.meta.url);
  function sources(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const f = path.join(dir, e.name);
      return e.isDirectory() ? sources(f) : /\.(ts|mjs|js)$/.test(e.name) ? [f] : [];
    });
  }
  const files = sources(path.join(root.pathname, 'src')).filter((f) => !f.endsWith(`${path.sep}errors.ts`));

  it('every TOOLEXEC_ERR_ code named in src/ is in the table (and so in docs/errors.md)', () => {
    const used = new Set(files.flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(/TOOLEXEC_ERR_[A-Z]+(?:_[A-Z]+)*/g)].map((m) => m[0])));
    expect(used.size).toBeGreaterThan(20);
    expect([...used].filter((c) => !Object.hasOwn(ERROR_CODES, c))).toEqual([]);
  });

  it('a body written by hand with a code answers the status the table gives it', () => {
    const wrong: string[] = [];
    for (const f of files) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/status\((\d{3})\)\.send\(\{\s*error:\s*\{\s*code:\s*'(TOOLEXEC_ERR_[A-Z_]+)'/g)) {
        const status = ERROR_CODES[m[2] as keyof typeof ERROR_CODES]?.status;
        if (status !== Number(m[1])) wrong.push(`${path.relative(root.pathname, f)}: ${m[2]} answered ${m[1]}, the table says ${status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('openapi/openapi.json enumerates exactly the table’s codes', () => {
    const doc = JSON.parse(fs.readFileSync(path.join(root.pathname, 'openapi', 'openapi.json'), 'utf8')) as {
      components: { schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } } };
    };
    expect([...doc.components.schemas.Error.properties.error.properties.code.enum].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });
});
