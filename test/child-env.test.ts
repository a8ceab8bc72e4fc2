/**
 * What child processes see of the service's environment: no TOOLEXEC_*
 * variable, no token value, no credential the configuration's headers name,
 * nothing server.redact names or matches.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { bashTool } from '../src/tools/bash.js';
import { childEnvironment } from '../src/util/env.js';
import { cleanupTmp, makeApp, textOf, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

describe('childEnvironment', () => {
  it('removes TOOLEXEC_* variables, secret values, redacted names and values matching /patterns/', () => {
    const env = { PATH: '/usr/bin', TOOLEXEC_TOKEN: 't', A: 'secret-value', B: 'keep', C: 'sk-abc123', D: 'x' };
    expect(childEnvironment(env, ['secret-value'], ['D', '/^sk-[a-z0-9]+$/'])).toEqual({ PATH: '/usr/bin', B: 'keep' });
  });
});

describe('Bash and hooks', () => {
  it('do not see the credential a classifier header takes from the environment, nor redacted values', async () => {
    const env = { ...process.env, CLASSIFIER_KEY: 'ck-0123456789', MY_PAT: 'ghp_abcdefghijklmnop', HARMLESS: 'visible' };
    t = await makeApp(
      {
        permissions: { allow: ['Bash(env)'] },
        classifier: { url: 'http://127.0.0.1:9/classify', headers: { Authorization: 'Bearer ${CLASSIFIER_KEY}' } },
        server: { redact: ['/^ghp_/'] },
      },
      { extraTools: [bashTool], env },
    );
    const r = await t.app.inject({ method: 'POST', url: '/execute', payload: { tool_uses: [use('Bash', { command: 'env' })] } });
    const out = textOf(r.json().tool_results[0].content);
    expect(out).toContain('HARMLESS=visible');
    expect(out).not.toContain('ck-0123456789');
    expect(out).not.toContain('ghp_abcdefghijklmnop');
  });
});
