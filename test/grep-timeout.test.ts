/**
 * A pattern that backtracks catastrophically must not hang the service: the
 * JS engine runs in a worker thread that is ended when one file takes too
 * long (a timeout error), or when the call is cancelled; the event loop keeps
 * running meanwhile. rg, being linear, just answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../src/config/schema.js';
import type { OutputSink } from '../src/results/output-sink.js';
import type { ToolContext } from '../src/tool/types.js';
import { grep, type GrepInput } from '../src/tools/grep.js';
import { Workspace } from '../src/workspace.js';
import { cleanupTmp, tmpDir } from './helpers.js';

afterAll(cleanupTmp);

/** The slice of a ToolContext Grep uses, from real parts, with an in-memory output. */
function context(root: string, signal: AbortSignal): ToolContext {
  let text = '';
  const out: OutputSink = {
    write: (s) => {
      text += s;
    },
    get length() {
      return text.length;
    },
    finish: () => ({ kind: 'inline', text }),
    abort: () => {
      text = '';
    },
  };
  const ctx: Partial<ToolContext> = {
    workspace: new Workspace(root),
    signal,
    createOutput: () => out,
    childEnv: process.env,
    config: defaultConfig(),
    permissions: { mode: 'default', contentRules: () => [], pathRule: () => undefined, pathRuleBelow: () => undefined, isReadDenied: () => false, hardLinkChecker: () => Object.assign(() => undefined, { anyLinked: () => false, meet: () => undefined }) },
    session: { id: 's', mode: 'default', cwd: root, todos: [], touch: () => {} } as unknown as ToolContext['session'],
  };
  return ctx as ToolContext;
}

function evilCorpus(): string {
  const root = tmpDir('grep-evil-');
  fs.writeFileSync(path.join(root, 'ok.txt'), 'aaa\n');
  // 2^40 ways to split the a's: a backtracking engine never finishes this line.
  fs.writeFileSync(path.join(root, 'evil.txt'), `${'a'.repeat(40)}!\n`);
  return root;
}

const EVIL: GrepInput = { pattern: '(a+)+$', output_mode: 'content' };

describe('pathological patterns', () => {
  it('the JS engine gives up on the stalled file with a timeout error, and the event loop keeps running', async () => {
    const root = evilCorpus();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    try {
      const err = await grep(EVIL, context(root, new AbortController().signal), { engine: 'js', limits: { fileStallMs: 300, totalMs: 60_000 } }).then(
        () => undefined,
        (e: unknown) => e as Error & { errorClass?: string },
      );
      expect(err?.errorClass).toBe('timeout');
      expect(err?.message).toContain(`searching ${path.join(root, 'evil.txt')} took longer than 0.3 s`);
      expect(err?.message).toContain('backtracks catastrophically');
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  });

  it('a cancel ends a stalled JS search', async () => {
    const root = evilCorpus();
    const ac = new AbortController();
    const events: string[] = [];
    const p = grep(EVIL, context(root, ac.signal), { engine: 'js', limits: { fileStallMs: 600_000, totalMs: 600_000 } }).then(
      () => events.push('resolved'),
      (e: { errorClass?: string }) => events.push(`rejected:${e.errorClass}`),
    );
    setTimeout(() => {
      events.push('abort');
      ac.abort();
    }, 200);
    await p;
    expect(events).toEqual(['abort', 'rejected:cancelled']);
  });

  it('rg answers the same pattern at once (its engine is linear)', async () => {
    const root = evilCorpus();
    const { output } = await grep(EVIL, context(root, new AbortController().signal), { engine: 'rg' });
    expect(output.text).toBe('ok.txt:1:aaa');
    const js = await grep({ ...EVIL, path: 'ok.txt' }, context(root, new AbortController().signal), { engine: 'js' });
    expect(js.output.text).toBe('ok.txt:1:aaa');
  });
});
