// A tRPC client with resilienceLink and routingLink in a real browser: the page
// (test/browser/page.ts) is bundled from source by esbuild with
// --platform=browser — a Node built-in anywhere in @breakwater/core or
// @breakwater/trpc fails the bundle — and run in Debian's headless Chromium
// (playwright-core with the system executable, no browser download) against
// chaos tRPC servers that inject faults. Without Chromium this test fails: CI
// installs it (`.ci/run`), and locally `apt-get install -y chromium`.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type ChaosTrpcServer, createChaosTrpcServer } from '@breakwater/chaos';
import { build } from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { Outcome, Scenarios } from './browser/page.js';

const CHROMIUM = process.env.BREAKWATER_CHROMIUM ?? '/usr/bin/chromium';
const source = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

const PACKAGE_SOURCES: Record<string, string> = {
  '@breakwater/core': 'packages/core/src/index.ts',
  '@breakwater/core/adapter': 'packages/core/src/adapter.ts',
  '@breakwater/core/breaker': 'packages/core/src/breaker/index.ts',
  '@breakwater/core/health': 'packages/core/src/health/index.ts',
  '@breakwater/core/internal': 'packages/core/src/internal/index.ts',
  '@breakwater/core/time': 'packages/core/src/time/index.ts',
  '@breakwater/core/types': 'packages/core/src/types.ts',
  '@breakwater/trpc': 'packages/trpc/src/index.ts',
};

/** The page bundle: the workspace sources of the browser-safe packages, nothing else. */
async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [source('test/browser/page.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    // Exact names (esbuild's `alias` would also rewrite `@breakwater/core/internal` by prefix).
    plugins: [
      {
        name: 'workspace-sources',
        setup(b) {
          b.onResolve({ filter: /^@breakwater\/(core|core\/internal|trpc)$/ }, (args) => ({
            path: source(PACKAGE_SOURCES[args.path] as string),
          }));
        },
      },
    ],
  });
  return result.outputFiles[0]?.text ?? '';
}

/** Serves the page and its bundle from 127.0.0.1 (a local origin, so no private-network prompt). */
async function servePage(script: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/page.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    } else {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>breakwater</title><script src="/page.js"></script>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe('tRPC client in headless Chromium (esbuild --platform=browser bundle)', () => {
  let browser: Browser | undefined;
  let pageServer: Server | undefined;
  const chaos: ChaosTrpcServer[] = [];
  const serve = async (name: string, faults: Parameters<ChaosTrpcServer['setFaults']>[0]) => {
    const server = await createChaosTrpcServer({ name, faults, cors: true });
    chaos.push(server);
    return server;
  };
  /** Runs one scenario of the page in the browser. */
  const inBrowser = async <K extends keyof Scenarios>(
    name: K,
    ...args: Parameters<Scenarios[K]>
  ) => {
    ready ??= openPage();
    const page = await ready;
    return page.evaluate(
      ([n, a]) => {
        const scenarios = (globalThis as unknown as { breakwater: Scenarios }).breakwater;
        return (scenarios[n] as (...x: string[]) => Promise<Outcome>)(...a);
      },
      [name, args as string[]] as const,
    );
  };

  // Set up by the first test, not in beforeAll: a failed setup (no Chromium, a
  // Node built-in in the bundle) then fails every test instead of skipping them.
  let ready: Promise<Page> | undefined;
  async function openPage(): Promise<Page> {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set BREAKWATER_CHROMIUM)`,
      );
    }
    const served = await servePage(await bundlePage());
    pageServer = served.server;
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const page = await browser.newPage();
    await page.goto(served.url);
    await page.waitForFunction(() => 'breakwater' in globalThis);
    return page;
  }

  afterAll(async () => {
    await browser?.close();
    await Promise.all(chaos.map((s) => s.close()));
    if (pageServer) await new Promise((resolve) => pageServer?.close(resolve));
  });

  it('retries: two failed attempts, the third answers', async () => {
    const server = await serve('retry', { failFirst: 2 });
    expect(await inBrowser('retry', server.url)).toEqual({ answered: ['retry'], errors: [] });
    expect(server.stats().attempts.retry).toBe(3);
    expect(server.stats().faults.error).toBe(2);
  });

  it('deadline: a server that never answers costs two 150 ms attempts, then a deadline error', async () => {
    const server = await serve('deadline', { hangRate: 1 });
    expect(await inBrowser('deadline', server.url)).toEqual({
      answered: [],
      errors: ['deadline'],
    });
    expect(server.stats().attempts.deadline).toBe(2);
    expect(server.stats().faults.hang).toBe(2);
  });

  it('circuit: two failures open it, the next calls are refused in the browser', async () => {
    const server = await serve('circuit', { errorRate: 1 });
    const outcome = await inBrowser('circuit', server.url);
    expect(outcome.answered).toEqual([]);
    expect(outcome.errors.slice(2)).toEqual(['circuit-open', 'circuit-open']);
    expect(outcome.errors.slice(0, 2).every((e) => e.startsWith('trpc '))).toBe(true);
    expect(server.stats().requests).toBe(2);
  });

  it('resilienceLink: a refused connection ("Failed to fetch") is never-sent, so even a mutation is retried', async () => {
    const server = await serve('refused', {});
    await server.stop();
    ready ??= openPage();
    const page = await ready;
    const refusals: string[] = [];
    // The page reports each rejected fetch; the first one brings the server back.
    await page.exposeFunction('refused', async (message: string) => {
      refusals.push(message);
      if (!server.listening) await server.start();
    });
    expect(await inBrowser('refused', server.url)).toEqual({ answered: ['1'], errors: [] });
    expect(refusals).toEqual(['TypeError: Failed to fetch']);
    expect(server.stats().requests).toBe(1);
  });

  it('routingLink: a primary that refuses connections fails over to the secondary', async () => {
    const primary = await serve('primary', {});
    const secondary = await serve('secondary', {});
    await primary.stop();
    expect(await inBrowser('routing', primary.url, secondary.url)).toEqual({
      answered: ['secondary', 'secondary', 'secondary', 'secondary'],
      errors: [],
    });
    expect(secondary.stats().requests).toBe(4);
    expect(primary.stats().requests).toBe(0);
  });
});
