/**
 * Helpers for the web console's end-to-end tests: a real headless Chromium
 * (the system's /usr/bin/chromium, a fresh profile directory, its own process
 * group so that cleanup kills every child), driven by playwright-core over
 * CDP; pages that record script errors and CSP violations; screenshots under
 * test-artifacts/console/; and a tool that reports progress until cancelled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { z } from 'zod';
import { buildTool } from '../src/tool/build-tool.js';
import type { AnyTool } from '../src/tool/types.js';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const ARTIFACTS = path.resolve('test-artifacts/console');

/** Bounds every wait in these tests: a broken console fails, it never hangs. */
export const UI_TIMEOUT_MS = 10_000;
const LAUNCH_TIMEOUT_MS = 30_000;
const EXIT_GRACE_MS = 3000;

export interface RunningBrowser {
  browser: Browser;
  pid: number;
  close(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() => clearTimeout(timer));
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

/** Starts Chromium with a fresh user-data-dir and connects to it; close() ends the whole process group. */
export async function launchChromium(): Promise<RunningBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-chromium-'));
  const child = spawn(CHROMIUM, [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, '--remote-debugging-port=0', 'about:blank'], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const pid = child.pid;
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  // A test worker that exits without its afterAll leaves no browser behind.
  const onExit = (): void => {
    if (pid !== undefined && !gone()) killGroup(pid, 'SIGKILL');
  };
  process.once('exit', onExit);
  // Chromium asked to close (or SIGTERM) ends and reaps its own helpers; the
  // group is killed only when it does not.
  const cleanup = async (): Promise<void> => {
    if (pid !== undefined) {
      await within(exited(child), EXIT_GRACE_MS);
      if (!gone()) {
        killGroup(pid, 'SIGTERM');
        await within(exited(child), EXIT_GRACE_MS);
        killGroup(pid, 'SIGKILL');
        await within(exited(child), EXIT_GRACE_MS);
      }
    }
    process.off('exit', onExit);
    fs.rmSync(profile, { recursive: true, force: true });
  };
  try {
    if (pid === undefined) throw new Error(`could not start ${CHROMIUM}`);
    const endpoint = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`Chromium did not open its DevTools port in time: ${err.slice(-2000)}`)), LAUNCH_TIMEOUT_MS);
      child.stderr!.setEncoding('utf8');
      const onData = (d: string): void => {
        err += d;
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          child.stderr!.off('data', onData);
          resolve(m[1]!);
        }
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited (${code ?? signal}): ${err.slice(-2000)}`));
      });
    });
    // Its log keeps coming; nobody reads it past this point.
    child.stderr!.resume();
    const browser = await chromium.connectOverCDP(endpoint, { timeout: LAUNCH_TIMEOUT_MS });
    return {
      browser,
      pid,
      async close() {
        try {
          const cdp = await browser.newBrowserCDPSession();
          await within(cdp.send('Browser.close'), EXIT_GRACE_MS);
        } catch {
          /* already closing; cleanup ends the process */
        }
        await within(browser.close(), EXIT_GRACE_MS).catch(() => undefined);
        await cleanup();
      },
    };
  } catch (e) {
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
    await cleanup();
    throw e;
  }
}

export const DESKTOP = { viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 } as const;
export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true } as const;

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Uncaught script errors. */
  errors: string[];
  /** Console messages about the Content-Security-Policy (a violation means the page broke its own policy). */
  cspViolations: string[];
}

/** A new context (its own storage) and page at a viewport; every wait bounded. */
export async function openPage(browser: Browser, device: typeof DESKTOP | typeof PHONE): Promise<ConsolePage> {
  const context = await browser.newContext({ ...device });
  context.setDefaultTimeout(UI_TIMEOUT_MS);
  const page = await context.newPage();
  const errors: string[] = [];
  const cspViolations: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return { context, page, errors, cspViolations };
}

/** Saves a full-page screenshot as test-artifacts/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: 'disabled' });
  return file;
}

/** Signs in with a token and waits until the live connection is subscribed (the console is then an approver). */
export async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByLabel('Access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await waitLive(page);
}

export async function waitLive(page: Page): Promise<void> {
  await page.locator('#connection[data-state="live"]').waitFor();
}

/**
 * A tool that reports progress every few milliseconds (step n of 1000)
 * until it is cancelled or reaches the end; allowed by its own check, so it
 * runs without a prompt.
 */
export function tickerTool(): AnyTool {
  return buildTool({
    name: 'Ticker',
    description: 'Counts up, reporting progress, until cancelled',
    inputSchema: z.strictObject({ label: z.string() }),
    maxResultSizeChars: 10_000,
    checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'ticker allows itself' }),
    getToolUseSummary: (input: { label: string }) => `Ticker(${input.label})`,
    call: async (input, ctx, _canUseTool, _parent, onProgress) => {
      const total = 1000;
      for (let i = 1; i <= total; i++) {
        onProgress({ message: `${input.label}: step ${i}`, progress: i, total });
        await new Promise<void>((resolve, reject) => {
          const onAbort = (): void => {
            clearTimeout(timer);
            reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
          };
          const timer = setTimeout(() => {
            ctx.signal.removeEventListener('abort', onAbort);
            resolve();
          }, 20);
          if (ctx.signal.aborted) onAbort();
          else ctx.signal.addEventListener('abort', onAbort, { once: true });
        });
      }
      return { data: `${input.label}: done` };
    },
  });
}
