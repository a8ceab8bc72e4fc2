/**
 * The classifier layer (mode `auto`) against a real HTTP classifier on
 * 127.0.0.1, through POST /execute with the real Bash tool: its allow, deny
 * and ask answers and their audit rows; a timeout, an HTTP 500, garbage and
 * a missing decision all mean ask, never allow; and after 3 consecutive or
 * 20 total denials in a session the call goes to a person instead (answered
 * here through POST /permissions/requests/:id).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { interpretHookRun } from '../src/hooks/interpret.js';
import { isDangerousAllowRule } from '../src/permissions/dangerous-rules.js';
import { CLASSIFIER_DENIAL_LIMITS } from '../src/pipeline/step5-permission.js';
import type { ConfigInput } from '../src/config/schema.js';
import { cleanupTmp, execute, makeApp, tmpDir, use, type TestApp } from './helpers.js';
import { json, lastAudit, localServer, run, script, sleep, type LocalServer } from './helpers-hooks.js';

let t: TestApp | undefined;
let server: LocalServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await server?.close();
  server = undefined;
});
afterAll(cleanupTmp);

/** A classifier whose answer is `judge(the text it was sent)`: an object as JSON, a string as it is. */
async function start(
  judge: (command: string) => unknown,
  opts: { timeoutMs?: number; headless?: 'deny' | 'wait'; status?: number; hooks?: ConfigInput['hooks']; deny?: string[] } = {},
) {
  server = await localServer(async (req, res) => {
    const body = JSON.parse(req.body) as { input: string };
    const answer = await judge(body.input);
    if (typeof answer === 'string') {
      res.statusCode = opts.status ?? 200;
      res.end(answer);
    } else json(res, answer, opts.status ?? 200);
  });
  t = await makeApp({
    permissions: { defaultMode: 'auto', headless: opts.headless ?? 'deny', askTimeoutMs: 30_000, deny: opts.deny ?? [] },
    classifier: { url: `${server.url}/classify`, timeoutMs: opts.timeoutMs ?? 5000 },
    ...(opts.hooks ? { hooks: opts.hooks } : {}),
  });
  return { server, t };
}

const exists = (name: string) => fs.existsSync(path.join(t!.workspace, name));

describe('the classifier’s answers', () => {
  it('allow runs the call, deny refuses it with the reason, ask goes on to a person; each audited with its reason', async () => {
    const { server: s } = await start((command) =>
      command.includes('ok-')
        ? { decision: 'allow', reason: 'creating a scratch file in the workspace is fine' }
        : command.includes('bad-')
          ? { decision: 'deny', reason: 'names like bad-* are reserved' }
          : command.includes('alt-')
            ? { behavior: 'allow' }
            : { decision: 'ask', reason: 'not sure' },
    );
    const ok = await run(t!, 'Bash', { command: 'touch ok-1' }, 'auto-1');
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'classifier', detail: 'creating a scratch file in the workspace is fine' } } });
    expect(exists('ok-1')).toBe(true);
    expect(lastAudit(t!)).toMatchObject({ tool: 'Bash', behavior: 'allow', reason_type: 'classifier', reason_detail: 'creating a scratch file in the workspace is fine' });
    expect(JSON.parse(s.requests[0]!.body)).toEqual({ session_id: 'auto-1', tool: 'Bash', input: 'touch ok-1', tool_input: { command: 'touch ok-1' } });

    const bad = await run(t!, 'Bash', { command: 'touch bad-1' }, 'auto-1');
    expect(bad.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'classifier', detail: 'names like bad-* are reserved' } } });
    expect(bad.text).toBe('Permission to use Bash has been denied by the auto-mode classifier: names like bad-* are reserved');
    expect(exists('bad-1')).toBe(false);
    expect(lastAudit(t!)).toMatchObject({ behavior: 'deny', reason_type: 'classifier', reason_detail: 'names like bad-* are reserved' });

    const alt = await run(t!, 'Bash', { command: 'touch alt-1' }, 'auto-1');
    expect(alt.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'classifier', detail: 'classifier: allow' } } });

    const unsure = await run(t!, 'Bash', { command: 'touch maybe-1' }, 'auto-1');
    expect(unsure.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(unsure.chain).toContainEqual({ layer: 'classifier', outcome: 'ask', detail: 'not sure' });
    expect(exists('maybe-1')).toBe(false);
  });

  it('is not consulted for what the rules already decide, nor outside auto mode', async () => {
    const { server: s } = await start(() => ({ decision: 'allow' }));
    await t!.close();
    t = await makeApp({
      permissions: { defaultMode: 'auto', allow: ['Bash(touch ok:*)'], deny: ['Bash(rm:*)'] },
      classifier: { url: `${s.url}/classify`, timeoutMs: 5000 },
    });
    expect((await run(t, 'Bash', { command: 'touch ok' })).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule' } } });
    expect((await run(t, 'Bash', { command: 'rm -f ok' })).exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule', detail: 'Bash(rm:*)' } } });
    expect((await run(t, 'Bash', { command: 'ls' })).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'tool' } } });
    await t.app.inject({ method: 'PATCH', url: '/sessions/d', payload: { mode: 'default' } });
    expect((await run(t, 'Bash', { command: 'touch other' }, 'd')).exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(s.requests).toHaveLength(0);
  });

  it('never answers what even bypassPermissions asks about: an ask rule or a protected path goes to a person', async () => {
    const { server: s } = await start(() => ({ decision: 'allow', reason: 'looks fine' }));
    await t!.close();
    t = await makeApp({
      permissions: { defaultMode: 'auto', ask: ['Bash(touch asked:*)'], headless: 'deny' },
      classifier: { url: `${s.url}/classify`, timeoutMs: 5000 },
    });
    const asked = await run(t, 'Bash', { command: 'touch asked' });
    expect(asked.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(asked.chain).toContainEqual({ layer: 'classifier', outcome: 'skip', detail: 'an ask rule is for a person to answer' });
    expect(exists('asked')).toBe(false);
    const git = await run(t, 'Write', { file_path: path.join(t.workspace, '.git', 'config'), content: '[core]\n' });
    expect(git.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(git.chain).toContainEqual({ layer: 'classifier', outcome: 'skip', detail: 'a protected path is for a person to answer' });
    expect(exists('.git/config')).toBe(false);
    // The same classifier still answers an ordinary ask.
    expect((await run(t, 'Bash', { command: 'touch plain' })).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'classifier' } } });
    expect(s.requests).toHaveLength(1);
  });
});

describe('allow rules auto mode sets aside', () => {
  it('does not apply an interpreter or shell allow rule in auto mode: the classifier judges the call; in default mode the rule holds', async () => {
    const { server: s } = await start((command) => ({ decision: 'deny', reason: `no: ${command}` }));
    await t!.close();
    t = await makeApp({
      permissions: { defaultMode: 'auto', allow: ['Bash(node:*)', 'Bash(env *)', 'Bash(touch safe:*)'], headless: 'deny' },
      classifier: { url: `${s.url}/classify`, timeoutMs: 5000 },
    });
    const viaNode = `node -e "require('fs').writeFileSync('vianode', '')"`;
    const denied = await run(t, 'Bash', { command: viaNode }, 'a');
    expect(denied.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'classifier', detail: `no: ${viaNode}` } } });
    expect(exists('vianode')).toBe(false);
    const viaEnv = await run(t, 'Bash', { command: 'env touch viaenv' }, 'a');
    expect(viaEnv.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'classifier' } } });
    // An allow rule for a plain command still holds in auto mode.
    expect((await run(t, 'Bash', { command: 'touch safe' }, 'a')).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'Bash(touch safe:*)' } } });
    expect(s.requests).toHaveLength(2);
    // Out of auto mode the same rules apply as written.
    await t.app.inject({ method: 'PATCH', url: '/sessions/d', payload: { mode: 'default' } });
    expect((await run(t, 'Bash', { command: viaNode }, 'd')).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'Bash(node:*)' } } });
    expect(exists('vianode')).toBe(true);
    expect(s.requests).toHaveLength(2);
  });
});

describe('a classifier that fails means ask, never allow', () => {
  const failing: Array<[string, (command: string) => unknown, { timeoutMs?: number; status?: number }, RegExp]> = [
    ['a timeout', async () => (await sleep(3000), { decision: 'allow' }), { timeoutMs: 300 }, /timed out after 300 ms/],
    ['HTTP 500', () => ({ decision: 'allow' }), { status: 500 }, /HTTP 500/],
    ['garbage', () => '<html>oops</html>', {}, /unavailable|not understood/],
    ['an unknown decision', () => ({ decision: 'yes' }), {}, /not understood/],
    ['no decision', () => ({ reason: 'hmm' }), {}, /no decision/],
  ];
  for (const [what, judge, opts, detail] of failing) {
    it(`${what}: ask (headless deny), nothing runs`, async () => {
      await start(judge, opts);
      const r = await run(t!, 'Bash', { command: 'touch f' });
      expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'headless' } } });
      const step = r.chain.find((c) => c.layer === 'classifier')!;
      expect(step.outcome).toBe('ask');
      expect(step.detail).toMatch(detail);
      expect(exists('f')).toBe(false);
      expect(lastAudit(t!)).toMatchObject({ behavior: 'deny', reason_type: 'headless' });
    });
  }
});

describe('denial limits: after 3 consecutive or 20 total denials, a person decides', () => {
  /** Runs a call that will wait for a person, and answers it through POST /permissions/requests/:id. */
  async function answeredByPerson(command: string, session: string, decision: 'allow' | 'deny') {
    const pending = execute(t!.app, { session_id: session, tool_uses: [use('Bash', { command })] });
    let id: string | undefined;
    for (let i = 0; i < 200 && !id; i++) {
      const list = (await t!.app.inject({ method: 'GET', url: '/permissions/requests' })).json() as { requests: Array<{ id: string; session_id: string; status: string }> };
      id = list.requests.find((p) => p.session_id === session && p.status === 'pending')?.id;
      if (!id) await sleep(25);
    }
    expect(id).toBeDefined();
    const res = await t!.app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision } });
    expect(res.statusCode).toBe(200);
    return (await pending).body;
  }

  it('3 in a row: the 4th call is not sent to the classifier but to a person; other sessions keep their classifier', async () => {
    expect(CLASSIFIER_DENIAL_LIMITS).toEqual({ maxConsecutive: 3, maxTotal: 20 });
    const { server: s } = await start(() => ({ decision: 'deny', reason: 'no' }), { headless: 'wait' });
    for (let i = 0; i < 3; i++) {
      const r = await run(t!, 'Bash', { command: `touch d${i}` }, 'limit');
      expect(r.exec.decision!.reason.type).toBe('classifier');
    }
    const body = await answeredByPerson('touch d3', 'limit', 'allow');
    expect(body.executions[0]).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'user' } } });
    expect(exists('d3')).toBe(true);
    expect(s.requests).toHaveLength(3);
    const row = t!.app.toolexec.executions.get(body.executions[0]!.id)!;
    const chain = JSON.parse(row.decision!).chain as Array<{ layer: string; outcome: string; detail: string }>;
    expect(chain).toContainEqual({ layer: 'classifier', outcome: 'skip', detail: 'denial limit reached (3 in a row, 3 in all): asking a person' });
    // Another session has its own count.
    expect((await run(t!, 'Bash', { command: 'touch other' }, 'fresh')).exec.decision!.reason.type).toBe('classifier');
    expect(s.requests).toHaveLength(4);
  });

  it('20 in all, never 3 in a row: the 30th call goes to a person', async () => {
    const { server: s } = await start((command) => (command.includes('deny') ? { decision: 'deny', reason: 'no' } : { decision: 'allow', reason: 'yes' }), {
      headless: 'wait',
    });
    // deny, deny, allow, … : 20 denials and 9 allows in 29 calls, never 3 denials in a row.
    const kinds = Array.from({ length: 10 }, () => ['deny-a', 'deny-b', 'ok']).flat().slice(0, 29);
    const reasons: string[] = [];
    for (const [i, kind] of kinds.entries()) {
      const r = await run(t!, 'Bash', { command: `touch ${kind}-${i}` }, 'total');
      reasons.push(`${r.exec.decision!.behavior}:${r.exec.decision!.reason.type}`);
    }
    expect(reasons).toEqual(kinds.map((k) => (k === 'ok' ? 'allow:classifier' : 'deny:classifier')));
    expect(s.requests).toHaveLength(29);
    // Even a call the classifier would allow now needs a person.
    const body = await answeredByPerson('touch ok-30', 'total', 'deny');
    expect(body.executions[0]).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'user' } } });
    expect(exists('ok-30')).toBe(false);
    expect(s.requests).toHaveLength(29);
    const row = t!.app.toolexec.executions.get(body.executions[0]!.id)!;
    expect(row.decision).toContain('denial limit reached (2 in a row, 20 in all)');
  });
});

describe('isDangerousAllowRule', () => {
  it('matches Claude Code’s patterns and nothing else', () => {
    const rule = (raw: string): { behavior: 'allow'; toolName: string; content: string | undefined } => {
      const m = /^(\w+)(?:\((.*)\))?$/.exec(raw)!;
      return { behavior: 'allow', toolName: m[1]!, content: m[2] === undefined || m[2] === '*' || m[2] === '' ? undefined : m[2] };
    };
    for (const raw of ['Bash', 'Bash(*)', 'Bash(python:*)', 'Bash(python3 *)', 'Bash(node*)', 'Bash(npx:*)', 'Bash(npm run:*)', 'Bash(bash)', 'Bash(sudo:*)', 'Bash(xargs *)', 'Bash(python -c *)', 'Bash(PYTHON:*)']) {
      expect(isDangerousAllowRule(rule(raw)), raw).toBe(true);
    }
    for (const raw of ['Bash(npm test:*)', 'Bash(git status:*)', 'Bash(python script.py)', 'Bash(nodemon:*)', 'Bash(shellcheck:*)', 'Read', 'Edit(./src/**)', 'Bash(envsubst:*)']) {
      expect(isDangerousAllowRule(rule(raw)), raw).toBe(false);
    }
    expect(isDangerousAllowRule({ behavior: 'deny', toolName: 'Bash', content: 'python:*' })).toBe(false);
  });
});

describe('PermissionDenied hooks', () => {
  /** A hook that records what it was sent and prints `answer` (JSON) unless `code` is not 0. */
  function deniedHook(dir: string, answer: unknown, code = 0): { command: string; seen: () => Array<Record<string, unknown>> } {
    const log = path.join(dir, 'denied.jsonl');
    const out = path.join(dir, 'answer.json');
    fs.writeFileSync(out, JSON.stringify(answer));
    const command = script(dir, 'denied.sh', `cat >> '${log}'; echo >> '${log}'; ${code === 0 ? `cat '${out}'` : `echo 'cannot help' >&2; exit ${code}`}`);
    const seen = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
    return { command, seen };
  }

  it('run after a classifier denial with the reason; retry:true tells the model it may try again, and the refusal stands; their additionalContext never reaches the model, as in Claude Code', async () => {
    const dir = tmpDir();
    const hook = deniedHook(dir, { hookSpecificOutput: { hookEventName: 'PermissionDenied', retry: true, additionalContext: 'Ask the user to add an allow rule first.' } });
    await start(() => ({ decision: 'deny', reason: 'names like bad-* are reserved' }), {
      hooks: { PermissionDenied: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook.command }] }] },
    });
    const r = await run(t!, 'Bash', { command: 'touch bad-1' }, 'denied-hooks');
    expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'classifier', detail: 'names like bad-* are reserved' } } });
    expect(exists('bad-1')).toBe(false);
    expect(r.text).toBe(
      'Permission to use Bash has been denied by the auto-mode classifier: names like bad-* are reserved\n\n' +
        'The PermissionDenied hook indicated this command is now approved. You may retry it if you would like.',
    );
    expect(r.messages).toContainEqual(
      expect.objectContaining({ event: 'PermissionDenied', kind: 'non_blocking_error', text: expect.stringContaining('additionalContext does not apply to PermissionDenied') }),
    );
    expect(r.chain).toContainEqual({ layer: 'hooks', outcome: 'deny', detail: `PermissionDenied: ${hook.command} allows a retry` });
    expect(hook.seen()).toEqual([
      expect.objectContaining({
        hook_event_name: 'PermissionDenied',
        session_id: 'denied-hooks',
        permission_mode: 'auto',
        tool_name: 'Bash',
        tool_input: { command: 'touch bad-1' },
        tool_use_id: r.block.tool_use_id,
        reason: 'names like bad-* are reserved',
      }),
    ]);
    expect(lastAudit(t!)).toMatchObject({ behavior: 'deny', reason_type: 'classifier' });
  });

  it('without retry the text is the classifier’s; an exit 2 is recorded and blocks nothing more; other denials and allows do not run them', async () => {
    const dir = tmpDir();
    const quiet = deniedHook(dir, {}, 2);
    await start((command) => (command.includes('ok-') ? { decision: 'allow', reason: 'fine' } : { decision: 'deny', reason: 'no' }), {
      hooks: { PermissionDenied: [{ matcher: 'Bash', hooks: [{ type: 'command', command: quiet.command }] }] },
      deny: ['Bash(rm:*)'],
    });
    const denied = await run(t!, 'Bash', { command: 'touch nope' }, 'quiet');
    expect(denied.text).toBe('Permission to use Bash has been denied by the auto-mode classifier: no');
    expect(denied.messages).toContainEqual(expect.objectContaining({ event: 'PermissionDenied', kind: 'blocking_error', text: `[${quiet.command}]: cannot help` }));
    expect(quiet.seen()).toHaveLength(1);
    // A rule's denial and a classifier's allow are not classifier denials.
    expect((await run(t!, 'Bash', { command: 'rm -f x' }, 'quiet')).exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'rule' } } });
    expect((await run(t!, 'Bash', { command: 'touch ok-2' }, 'quiet')).exec.status).toBe('succeeded');
    expect(quiet.seen()).toHaveLength(1);
  });
});

describe('PermissionDenied hooks with an `if`', () => {
  it('never run, as in Claude Code (it evaluates `if` on PreToolUse, PostToolUse, PostToolUseFailure and PermissionRequest only, and skips the hook elsewhere); one without `if` beside them runs', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'ran.log');
    const conditional = script(dir, 'conditional.sh', `cat >/dev/null; echo conditional >> '${log}'; echo '{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}'`);
    const plain = script(dir, 'plain.sh', `cat >/dev/null; echo plain >> '${log}'`);
    await start(() => ({ decision: 'deny', reason: 'no' }), {
      hooks: {
        PermissionDenied: [{ matcher: 'Bash', hooks: [{ type: 'command', command: conditional, if: 'Bash(touch *)' }, { type: 'command', command: plain }] }],
      },
    });
    const r = await run(t!, 'Bash', { command: 'touch denied-1' }, 'if-denied');
    expect(r.exec.status).toBe('denied');
    expect(r.text).toBe('Permission to use Bash has been denied by the auto-mode classifier: no');
    expect(fs.readFileSync(log, 'utf8')).toBe('plain\n');
  });
});

describe('retry in a hook’s JSON', () => {
  const run = (event: 'PreToolUse' | 'PermissionDenied', json: unknown) =>
    interpretHookRun(event, 'Bash', { hook: 'h', exitCode: 0, stdout: JSON.stringify(json), stderr: '', timedOut: false, durationMs: 1, error: undefined });

  it('is read by PermissionDenied only when it is true, and never makes another event’s hook invalid', () => {
    expect(run('PermissionDenied', { hookSpecificOutput: { hookEventName: 'PermissionDenied', retry: true } }).retry).toBe('h');
    expect(run('PermissionDenied', { hookSpecificOutput: { hookEventName: 'PermissionDenied', retry: 'true' } }).retry).toBeUndefined();
    const pre = run('PreToolUse', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no', retry: 'yes' } });
    expect(pre.permission).toEqual({ behavior: 'deny', reason: 'no' });
    expect(pre.retry).toBeUndefined();
    expect(pre.messages).toEqual([]);
  });
});

describe('a classifier’s answer is bounded', () => {
  it('an answer past 1 MiB means ask, read no further; a long reason is cut before it reaches the model and the audit', async () => {
    const { HttpClassifier, MAX_ANSWER_BYTES, MAX_REASON_CHARS } = await import('../src/permissions/classifier.js');
    let streamed = 0;
    const srv = await localServer(async (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/huge') {
        // 200 MB of reason, sent as long as it is read.
        res.write('{"decision":"deny","reason":"');
        const chunk = 'x'.repeat(1 << 20);
        for (let i = 0; i < 200 && !res.destroyed; i++) {
          streamed += chunk.length;
          if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
        }
        res.end('"}');
      } else res.end(JSON.stringify({ decision: 'deny', reason: 'r'.repeat(100_000) }));
    });
    try {
      const judge = (p: string) => new HttpClassifier({ url: `${srv.url}${p}`, timeoutMs: 20_000 }).classify({ sessionId: 's', tool: 'Bash', text: 'touch x', input: {} }, new AbortController().signal);
      expect(await judge('/huge')).toEqual({ behavior: 'ask', reason: `classifier answer larger than ${MAX_ANSWER_BYTES} bytes` });
      expect(streamed).toBeLessThan(50 * (1 << 20));
      const long = await judge('/long');
      expect(long.behavior).toBe('deny');
      expect(long.reason.startsWith('r'.repeat(MAX_REASON_CHARS))).toBe(true);
      expect(long.reason.length).toBeLessThan(MAX_REASON_CHARS + 100);
    } finally {
      await srv.close();
    }
  });
});
