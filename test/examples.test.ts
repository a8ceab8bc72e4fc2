/**
 * The examples, run: the Anthropic and OpenAI agent loops against a real
 * listening toolexec, with the model's answers replayed through each SDK's
 * own client (a recorded `fetch`); the Claude Code settings and hook scripts
 * through the pipeline as they are; the Kubernetes manifest's names, ports
 * and references checked against each other and the service; and the
 * examples type-checked against the SDKs' types.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { parse } from '../src/cli/args.js';
import { SERVE_OPTIONS } from '../src/cli/serve.js';
import { runAnthropicLoop } from '../examples/agent-loops/anthropic-loop.js';
import { runOpenAILoop } from '../examples/agent-loops/openai-loop.js';
import { anthropicCheck, openaiCheck, replayFetch, type RecordedRequest } from '../examples/agent-loops/replay-fetch.js';
import { Toolexec } from '../examples/agent-loops/toolexec.js';
import { cleanupTmp, execute, textOf, tmpDir, use } from './helpers.js';
import { ROOT, cleanEnv, runBin } from './helpers-cli.js';
import { yaml } from './helpers-container.js';

const EXAMPLES = path.join(ROOT, 'examples');
const TOKEN = 'examples-test-token-0123456789';
const apps: FastifyInstance[] = [];

afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
afterAll(cleanupTmp);

interface Recording {
  prompt: string;
  system: string;
  responses: unknown[];
}
const recording = (name: string): Recording => JSON.parse(fs.readFileSync(path.join(EXAMPLES, 'agent-loops/recorded', name), 'utf8')) as Recording;

/** toolexec listening on loopback, configured by examples/agent-loops/toolexec.json on a copy of its workspace. */
async function agentLoopService(): Promise<{ url: string; ws: string; app: FastifyInstance }> {
  const dir = tmpDir('toolexec-examples-');
  const ws = path.join(dir, 'ws');
  fs.cpSync(path.join(EXAMPLES, 'agent-loops/workspace'), ws, { recursive: true });
  const loaded = loadConfig({ configPath: path.join(EXAMPLES, 'agent-loops/toolexec.json'), overrides: { workspace: ws, dataDir: path.join(dir, 'data') }, env: {} });
  expect(loaded.warnings).toEqual([]);
  const app = await buildApp({ config: loaded.config, rules: loaded.rules, logger: false, env: { TOOLEXEC_TOKEN: TOKEN } });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, ws, app };
}

async function auditOf(url: string, session: string): Promise<Array<{ tool: string; behavior: string; reason: { type: string; detail: string } }>> {
  const res = await fetch(`${url}/audit?session_id=${session}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { entries: Array<{ tool: string; behavior: string; reason: { type: string; detail: string } }> }).entries.reverse();
}

describe('the Anthropic agent loop', () => {
  it('runs the recorded conversation through @anthropic-ai/sdk and toolexec: every tool_use answered, the file fixed, the denial seen by the model', async () => {
    const svc = await agentLoopService();
    const rec = recording('anthropic.json');
    const requests: RecordedRequest[] = [];
    const client = new Anthropic({ apiKey: 'replay', maxRetries: 0, fetch: replayFetch(rec.responses, anthropicCheck, requests) });
    const toolexec = new Toolexec({ url: svc.url, token: TOKEN, sessionId: 's-anthropic-example' });
    const { turns, final, messages } = await runAnthropicLoop({ client, toolexec, model: 'claude-sonnet-4-6', prompt: rec.prompt, system: rec.system });

    expect(turns).toBe(4);
    expect(final.stop_reason).toBe('end_turn');
    expect(fs.readFileSync(path.join(svc.ws, 'greeting.txt'), 'utf8')).toBe('Hello, world!\n');
    // What the SDK sent: the catalog as tools, then each turn's results right after its calls.
    expect(requests.map((r) => r.url)).toEqual(Array(4).fill('https://api.anthropic.com/v1/messages'));
    const toolNames = (requests[0]!.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(toolNames).toEqual(expect.arrayContaining(['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'ToolSearch']));
    const results = (i: number) => (requests[i]!.body.messages as Anthropic.Messages.MessageParam[]).at(-1)!.content as Anthropic.Messages.ToolResultBlockParam[];
    expect(results(1).map((r) => r.tool_use_id)).toEqual(['toolu_01GrepHelo', 'toolu_01GlobTxt']);
    expect(textOf(results(1)[0]!.content)).toMatch(/greeting\.txt:(1:)?Helo, world!/);
    expect(textOf(results(1)[1]!.content)).toBe(path.join(svc.ws, 'greeting.txt'));
    expect(results(2)).toEqual([expect.objectContaining({ tool_use_id: 'toolu_02ReadGreeting' })]);
    expect(textOf(results(2)[0]!.content)).toContain('Helo, world!');
    const [edit, bash] = results(3);
    expect(edit).toMatchObject({ tool_use_id: 'toolu_03EditGreeting' });
    expect(edit!.is_error ?? false).toBe(false);
    expect(bash).toMatchObject({ tool_use_id: 'toolu_03CleanBuild', is_error: true });
    expect(textOf(bash!.content)).toContain('Permission to use Bash with command rm -rf build has been denied.');
    expect(messages).toHaveLength(8);
    const audit = await auditOf(svc.url, 's-anthropic-example');
    // Grep and Glob run side by side (both concurrency-safe): each is audited when its own decision is made, in either order.
    expect(audit.slice(0, 2).map((a) => `${a.tool} ${a.behavior}`).sort()).toEqual(['Glob allow', 'Grep allow']);
    expect(audit.slice(2)).toEqual([
      expect.objectContaining({ tool: 'Read', behavior: 'allow' }),
      expect.objectContaining({ tool: 'Edit', behavior: 'allow', reason: { type: 'rule', detail: 'Edit' } }),
      expect.objectContaining({ tool: 'Bash', behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm:*)' } }),
    ]);
  });

  it('fails the replay, as the API would reject the request, when a loop drops a tool_result', async () => {
    const rec = recording('anthropic.json');
    const client = new Anthropic({ apiKey: 'replay', maxRetries: 0, fetch: replayFetch(rec.responses, anthropicCheck) });
    const first = await client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: rec.prompt }] });
    const broken = client.messages.create({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: rec.prompt },
        { role: 'assistant', content: first.content },
        { role: 'user', content: 'go on' },
      ],
    });
    await expect(broken).rejects.toThrow(/tool_use id toolu_01GrepHelo has no tool_result block/);
  });
});

describe('the OpenAI agent loop', () => {
  it('runs the recorded conversation through the openai package and toolexec: one tool message per call, in order', async () => {
    const svc = await agentLoopService();
    const rec = recording('openai.json');
    const requests: RecordedRequest[] = [];
    const client = new OpenAI({ apiKey: 'replay', maxRetries: 0, fetch: replayFetch(rec.responses, openaiCheck, requests) });
    const toolexec = new Toolexec({ url: svc.url, token: TOKEN, sessionId: 's-openai-example' });
    const { turns, final, messages } = await runOpenAILoop({ client, toolexec, model: 'gpt-4.1', prompt: rec.prompt, system: rec.system });

    expect(turns).toBe(4);
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(fs.readFileSync(path.join(svc.ws, 'greeting.txt'), 'utf8')).toBe('Hello, world!\n');
    expect(requests.map((r) => r.url)).toEqual(Array(4).fill('https://api.openai.com/v1/chat/completions'));
    const tools = requests[0]!.body.tools as Array<{ type: string; function: { name: string; parameters: { type: string } } }>;
    expect(tools.every((t) => t.type === 'function' && t.function.parameters.type === 'object')).toBe(true);
    const toolMessages = messages.filter((m): m is OpenAI.Chat.Completions.ChatCompletionToolMessageParam => m.role === 'tool');
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['call_grep_helo', 'call_glob_txt', 'call_read_greeting', 'call_edit_greeting', 'call_clean_build']);
    expect(toolMessages[4]!.content).toContain('Permission to use Bash with command rm -rf build has been denied.');
    // The last request carries the whole conversation: system, user, then assistant/tool turns.
    const sent = requests[3]!.body.messages as Array<{ role: string }>;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'tool']);
  });
});

describe('the Claude Code settings and hooks, as they are', () => {
  async function claudeProject(): Promise<{ app: FastifyInstance; dir: string }> {
    const dir = tmpDir('toolexec-claude-');
    fs.cpSync(path.join(EXAMPLES, 'claude-code'), dir, { recursive: true });
    // The way the README says to run it: --claude-settings on the project's own file.
    const loaded = loadConfig({ claudeSettingsPath: path.join(dir, '.claude/settings.json'), overrides: { workspace: dir, dataDir: path.join(dir, '.toolexec') }, env: {} });
    expect(loaded.warnings).toEqual([]);
    const app = await buildApp({ config: loaded.config, rules: loaded.rules, logger: false });
    apps.push(app);
    return { app, dir };
  }

  it('blocks a Bash command with the validator hook (exit 2): the model reads its reasons', async () => {
    const { app } = await claudeProject();
    const r = await execute(app, { session_id: 'cc', tool_uses: [use('Bash', { command: 'grep -r TODO .' }, 'toolu_grep')] });
    expect(r.body.tool_results[0]!.is_error).toBe(true);
    expect(textOf(r.body.tool_results[0]!.content)).toContain("Use 'rg' (ripgrep) instead of 'grep'");
    expect(r.body.executions[0]!.decision).toMatchObject({ behavior: 'deny', reason: { type: 'hook' } });
  });

  it('lets an allowed command through the same hook', async () => {
    const { app } = await claudeProject();
    const r = await execute(app, { session_id: 'cc', tool_uses: [use('Bash', { command: 'ls config' })] });
    expect(r.body.tool_results[0]!.is_error ?? false).toBe(false);
    expect(textOf(r.body.tool_results[0]!.content)).toBe('app.json');
  });

  it('formats the JSON a Write produced with the PostToolUse hook', async () => {
    const { app, dir } = await claudeProject();
    const r = await execute(app, { session_id: 'cc', tool_uses: [use('Write', { file_path: 'config/new.json', content: '{"name":"x","tags":["a","b"]}' })] });
    expect(r.body.tool_results[0]!.is_error ?? false).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'config/new.json'), 'utf8')).toBe('{\n  "name": "x",\n  "tags": [\n    "a",\n    "b"\n  ]\n}\n');
  });

  it("applies the settings' permission rules: .env is denied, a Write outside config/ is not granted", async () => {
    const { app, dir } = await claudeProject();
    const r = await execute(app, {
      session_id: 'cc',
      tool_uses: [use('Read', { file_path: '.env' }), use('Write', { file_path: 'elsewhere.json', content: '{}' })],
    });
    expect(r.body.executions.map((e) => [e.tool, e.decision?.behavior, e.decision?.reason.type])).toEqual([
      ['Read', 'deny', 'rule'],
      ['Write', 'deny', 'headless'],
    ]);
    expect(fs.existsSync(path.join(dir, 'elsewhere.json'))).toBe(false);
  });
});

describe('the Kubernetes sidecar manifest', () => {
  type Obj = { kind: string; metadata: { name: string; labels?: Record<string, string> }; [k: string]: unknown };
  interface Container {
    name: string;
    image: string;
    args?: string[];
    restartPolicy?: string;
    env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
    ports?: Array<{ name: string; containerPort: number }>;
    volumeMounts?: Array<{ name: string; mountPath: string }>;
    startupProbe?: { httpGet: { path: string; port: string } };
    livenessProbe?: { httpGet: { path: string; port: string } };
    readinessProbe?: { httpGet: { path: string; port: string } };
  }
  const docs = yaml.loadAll(fs.readFileSync(path.join(ROOT, 'deploy/k8s/toolexec-sidecar.yaml'), 'utf8')) as Obj[];
  const byKind = (kind: string): Obj => docs.find((d) => d.kind === kind)!;
  const deployment = byKind('Deployment') as Obj & {
    spec: {
      selector: { matchLabels: Record<string, string> };
      template: {
        metadata: { labels: Record<string, string> };
        spec: { securityContext: { runAsUser: number }; initContainers: Container[]; containers: Container[]; volumes: Array<{ name: string; configMap?: { name: string } }> };
      };
    };
  };
  const pod = deployment.spec.template.spec;
  const toolexec = pod.initContainers.find((c) => c.name === 'toolexec')!;
  const agent = pod.containers.find((c) => c.name === 'agent')!;

  it('holds a Secret, a ConfigMap, the Deployment and a NetworkPolicy whose selectors match the pods', () => {
    expect(docs.map((d) => d.kind)).toEqual(['Secret', 'ConfigMap', 'Deployment', 'NetworkPolicy']);
    const labels = deployment.spec.template.metadata.labels;
    expect(labels).toMatchObject(deployment.spec.selector.matchLabels);
    const policy = byKind('NetworkPolicy') as Obj & { spec: { podSelector: { matchLabels: Record<string, string> } } };
    expect(labels).toMatchObject(policy.spec.podSelector.matchLabels);
  });

  it('runs toolexec as a native sidecar with arguments `toolexec serve` accepts, as the image user', () => {
    expect(toolexec.restartPolicy).toBe('Always');
    expect(toolexec.image).toMatch(/^toolexec:/);
    const parsed = parse('serve', toolexec.args!.slice(1), SERVE_OPTIONS, 0);
    expect(toolexec.args![0]).toBe('serve');
    expect(parsed.values).toMatchObject({ host: '0.0.0.0', workspace: '/workspace', 'data-dir': '/data' });
    // The Dockerfile's USER node is uid 1000.
    expect(pod.securityContext.runAsUser).toBe(1000);
  });

  it('gives both containers the token from the Secret, and the agent the sidecar on localhost at its port', () => {
    const secret = byKind('Secret') as Obj & { stringData: Record<string, string> };
    for (const c of [toolexec, agent]) {
      const ref = c.env!.find((e) => e.name === 'TOOLEXEC_TOKEN')!.valueFrom!.secretKeyRef!;
      expect(ref.name).toBe(secret.metadata.name);
      expect(secret.stringData[ref.key]!.length).toBeGreaterThanOrEqual(16);
    }
    const port = toolexec.ports!.find((p) => p.name === 'toolexec')!.containerPort;
    expect(String(port)).toBe(toolexec.args![toolexec.args!.indexOf('--port') + 1]);
    const url = new URL(agent.env!.find((e) => e.name === 'TOOLEXEC_URL')!.value!);
    expect(['127.0.0.1', 'localhost']).toContain(url.hostname);
    expect(Number(url.port)).toBe(port);
  });

  it('probes /healthz (startup, liveness) and /readyz (readiness) on the named port; /healthz answers without a token', async () => {
    for (const probe of [toolexec.startupProbe, toolexec.livenessProbe]) expect(probe!.httpGet).toEqual({ path: '/healthz', port: 'toolexec' });
    expect(toolexec.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: 'toolexec' });
    expect(toolexec.ports!.map((p) => p.name)).toContain('toolexec');
    const svc = await agentLoopService();
    const res = await fetch(`${svc.url}/healthz`);
    expect(res.status).toBe(200);
  });

  it('shares the workspace volume between the containers, mounts every volume it declares, and loads its configuration', () => {
    const volumes = new Set(pod.volumes.map((v) => v.name));
    for (const c of [toolexec, agent]) for (const m of c.volumeMounts!) expect(volumes, `${c.name} mounts ${m.name}`).toContain(m.name);
    const workspace = toolexec.args![toolexec.args!.indexOf('--workspace') + 1];
    expect(toolexec.volumeMounts!.find((m) => m.mountPath === workspace)!.name).toBe('workspace');
    expect(agent.volumeMounts!.find((m) => m.name === 'workspace')).toBeDefined();
    const configEnv = toolexec.env!.find((e) => e.name === 'TOOLEXEC_CONFIG')!.value!;
    const mount = toolexec.volumeMounts!.find((m) => configEnv.startsWith(`${m.mountPath}/`))!;
    const cm = pod.volumes.find((v) => v.name === mount.name)!.configMap!;
    const configMap = byKind('ConfigMap') as Obj & { data: Record<string, string> };
    expect(cm.name).toBe(configMap.metadata.name);
    const text = configMap.data[path.basename(configEnv)]!;
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'toolexec.json'), text);
    const loaded = loadConfig({ configPath: path.join(dir, 'toolexec.json'), env: {} });
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.server.shutdownGraceMs / 1000).toBeLessThan((pod as unknown as { terminationGracePeriodSeconds: number }).terminationGracePeriodSeconds);
  });
});

describe('the examples compile', () => {
  it('type-check against @anthropic-ai/sdk and openai', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(EXAMPLES, 'tsconfig.json'), '--noEmit'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.status).toBe(0);
  });

  it('run from the command line as the README says, against a running service', async () => {
    const svc = await agentLoopService();
    // npx tsc -p examples; node examples/dist/agent-loops/anthropic-loop.js --url … (examples/dist is git-ignored).
    const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'examples'], { cwd: ROOT, encoding: 'utf8' });
    expect(tsc.status).toBe(0);
    // Spawned without blocking: the service answering it lives in this process.
    const r = await runBin(['examples/dist/agent-loops/anthropic-loop.js', '--url', svc.url], { command: [process.execPath], cwd: ROOT, env: cleanEnv({ TOOLEXEC_TOKEN: TOKEN }) });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('assistant: → Edit {"file_path":"greeting.txt","old_string":"Helo","new_string":"Hello"}');
    expect(r.stdout).toMatch(/\(4 turns, stop_reason end_turn, session example-[\w-]+\)\n$/);
  });
});
