/**
 * The file tools run in toolexec's own process: `/proc/self/environ` is its
 * environment (its tokens, the credentials it was started with). Like its
 * configuration files, no rule or mode lets Read or Grep have it; in
 * bypassPermissions a Read of it was allowed as a read outside the working
 * directories. The real service, reading its own /proc.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, makeApp, type TestApp } from './helpers.js';
import { BYPASS } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

describe("the service's environment", () => {
  it('is denied to Read and Grep in bypassPermissions, in every spelling', async () => {
    process.env.SEC8_ENV_MARKER = 'marker-7d1f0c';
    try {
      t = await makeApp({ permissions: { ...BYPASS, allow: ['Read', 'Grep'] } });
      for (const file_path of ['/proc/self/environ', `/proc/${process.pid}/environ`, `/proc/self/task/${process.pid}/environ`, '/proc/thread-self/environ']) {
        const r = await run(t, 'Read', { file_path });
        expect(r.text, file_path).not.toContain('marker-7d1f0c');
        expect(r.exec, file_path).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'safety' } } });
      }
      const g = await run(t, 'Grep', { pattern: 'SEC8_ENV_MARKER', path: '/proc/self/environ', output_mode: 'content' });
      expect(g.text).not.toContain('marker-7d1f0c');
      // Other /proc files are reads outside the working directories, as before.
      expect((await run(t, 'Read', { file_path: '/proc/self/status' })).exec.status).toBe('succeeded');
    } finally {
      delete process.env.SEC8_ENV_MARKER;
    }
  });
});
