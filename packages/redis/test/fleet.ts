// Runs a fleet of client processes (fleet-child.ts) against one redis-server.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { systemClock } from '@breakwater/core/time';
import { build } from 'esbuild';
import type { FleetChildConfig, FleetChildResult } from './fleet-child.js';

const entry = fileURLToPath(new URL('./fleet-child.ts', import.meta.url));
// Beside the package's node_modules, so the bundle finds ioredis.
const bundle = fileURLToPath(new URL('../node_modules/.fleet/fleet-child.mjs', import.meta.url));
let built: Promise<unknown> | undefined;

/**
 * Bundles the child and the sources it imports once per test file: a child then
 * starts in ~100 ms instead of transpiling every core module itself, so four of
 * them start together on a loaded two-core machine.
 */
function buildChild(): Promise<unknown> {
  built ??= build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: bundle,
    external: ['ioredis'],
    tsconfig: fileURLToPath(new URL('../../../tsconfig.json', import.meta.url)),
    logLevel: 'error',
  });
  return built;
}

interface Running {
  child: ChildProcess;
  ready: Promise<void>;
  result: Promise<FleetChildResult>;
}

/** Starts one child; `ready` resolves once it is connected and waits for the start time. */
function startChild(config: FleetChildConfig): Running {
  const child = spawn(process.execPath, [bundle, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  const result = new Promise<FleetChildResult>((resolve, reject) => {
    let last = '';
    lines.on('line', (line) => {
      if (line === 'ready') onReady();
      else last = line;
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`fleet child exited with ${String(code)}`));
      else resolve(JSON.parse(last) as FleetChildResult);
    });
  });
  return { child, ready: Promise.race([ready, result.then(() => {})]), result };
}

/** Runs `processes` children with the same config, starting their load together, and sums their counts. */
export async function runFleet(
  processes: number,
  config: FleetChildConfig,
): Promise<{ total: FleetChildResult; each: FleetChildResult[] }> {
  await buildChild();
  const fleet = Array.from({ length: processes }, (_, index) =>
    startChild(Object.assign({}, config, { index })),
  );
  await Promise.all(fleet.map((r) => r.ready));
  const startAt = systemClock() + 100;
  for (const r of fleet) r.child.stdin?.end(`${startAt}\n`);
  const each = await Promise.all(fleet.map((r) => r.result));
  const total = each.reduce(
    (sum, r) => {
      for (const k of Object.keys(sum) as (keyof FleetChildResult)[]) sum[k] += r[k];
      return sum;
    },
    {
      offered: 0,
      shared: 0,
      local: 0,
      sharedRetries: 0,
      localRetries: 0,
      redisCalls: 0,
      fallbacks: 0,
      timeouts: 0,
      errors: 0,
      behindMs: 0,
      openedAtMs: 0,
      recoveredAtMs: 0,
    },
  );
  return { total, each };
}

/**
 * Runs the outage scenario (kind `'outage'`): 4 processes at 500 calls/s each
 * through one shared circuit; returns each process's result (child 0 leads).
 */
export async function runOutage(
  port: number,
  name: string,
  openDurationMs: number,
  outage: NonNullable<FleetChildConfig['outage']>,
): Promise<FleetChildResult[]> {
  const { each } = await runFleet(4, {
    port,
    kind: 'outage',
    name,
    warmMs: 0,
    measureMs: outage.recoverAtMs + 500,
    offeredPerSecond: 500,
    openDurationMs,
    outage,
  });
  return each;
}
