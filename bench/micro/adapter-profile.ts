/**
 * Where each adapter lane's client CPU goes, call by call, against a real
 * server: every lane of the adapters suite runs in its own process
 * (`harness/lane-child.ts`) and profiles its measured rounds with V8's
 * sampling profiler. For each lane we print its CPU per call on the profile's
 * clock, split by owner — Breakwater's packages, the framework (grpc-js,
 * nice-grpc, tRPC), Node, native code, the garbage collector — and the
 * stack's most expensive Breakwater functions.
 *
 * Throughput at concurrency 1 drifts here by more than the 3% the adapter
 * targets are about, and a lane's CPU per call varies between runs too; the
 * split by owner within a run says how much of a call is Breakwater's own
 * code (the rest of a stack's extra cost shows up as more GC, microtask and
 * framework time).
 * Sampling costs every lane some throughput, so figures here are not the
 * adapters suite's.
 *
 * Run: cd bench && node --import tsx micro/adapter-profile.ts
 *      [--only grpc-js,nice-grpc,trpc] [--concurrency 1] [--ms 5000] [--runs 3] [--top 8]
 */
import { parseArgs } from 'node:util';
import { spawnGrpcChaosServer } from '@breakwater/chaos';
import { type CommandChild, spawnCommandChild, spawnTrpcServer } from '../harness/children.js';
import type { RoundFigures } from '../harness/closed-loop.js';
import type { Attribution, Owner } from '../harness/profile.js';
import { median } from '../harness/stats.js';
import {
  type AdapterName,
  type LaneSpec,
  VARIANTS,
  type Variant,
} from '../suites/adapter-lanes.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'grpc-js,nice-grpc,trpc' },
    concurrency: { type: 'string', default: '1' },
    ms: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '3' },
    top: { type: 'string', default: '8' },
  },
});
const adapters = values.only.split(',') as AdapterName[];
const concurrency = Number(values.concurrency);
const ms = Number(values.ms);
const runs = Number(values.runs);
const top = Number(values.top);

type Profiled = RoundFigures & { attribution: Attribution };

/** Owners as printed: the framework's own column, the rest folded. */
const COLUMNS: ReadonlyArray<readonly [string, readonly Owner[]]> = [
  ['Breakwater', ['breakwater']],
  ['framework', ['grpc-js', 'nice-grpc', 'trpc']],
  ['Node', ['node']],
  ['native + VM', ['native', 'program']],
  ['GC', ['gc']],
  ['bench + other', ['bench', 'other']],
];

function sum(a: Attribution, owners: readonly Owner[]): number {
  return owners.reduce((total, owner) => total + (a.usPerCall[owner] ?? 0), 0);
}

async function profileAdapter(adapter: AdapterName, address: string): Promise<void> {
  const variants = VARIANTS[adapter].filter((v) => v !== 'bareAgain');
  const lanes = new Map<Variant, CommandChild<unknown>>();
  try {
    for (const variant of variants) {
      const spec: LaneSpec = { adapter, variant, address };
      lanes.set(variant, await spawnCommandChild('lane-child.ts', [JSON.stringify(spec)]));
    }
    for (const lane of lanes.values()) await lane.command('run', { concurrency, ms: 3000 });
    const results = new Map<Variant, Profiled[]>(variants.map((v) => [v, []]));
    for (let run = 0; run < runs; run++) {
      // Rotate the order so no lane always runs first after the others.
      const order = variants.map((_, i) => variants[(i + run) % variants.length] as Variant);
      for (const variant of order) {
        const lane = lanes.get(variant) as CommandChild<unknown>;
        const r = (await lane.command('run', { concurrency, ms, profile: true })) as Profiled;
        if (r.errors > 0) throw new Error(`${adapter} ${variant}: ${r.errors} calls failed`);
        results.get(variant)?.push(r);
      }
    }
    report(adapter, results);
  } finally {
    await Promise.all([...lanes.values()].map((lane) => lane.close()));
  }
}

function report(adapter: AdapterName, results: Map<Variant, Profiled[]>): void {
  const fmt = (us: number) => us.toFixed(1).padStart(8);
  console.log(
    `\n${adapter}, c=${concurrency}: median of ${runs} profiled runs of ${ms} ms, µs per call`,
  );
  console.log(
    `${'lane'.padEnd(16)}${'calls/s'.padStart(8)}${'CPU'.padStart(8)}${'busy'.padStart(8)}${COLUMNS.map(([t]) => t.padStart(14)).join('')}`,
  );
  for (const [variant, rs] of results) {
    const cells = COLUMNS.map(([, owners]) =>
      fmt(median(rs.map((r) => sum(r.attribution, owners)))).padStart(14),
    );
    console.log(
      `${variant.padEnd(16)}${fmt(median(rs.map((r) => r.throughput)))}${fmt(median(rs.map((r) => r.clientCpuUs ?? Number.NaN)))}${fmt(median(rs.map((r) => r.attribution.busyUsPerCall)))}${cells.join('')}`,
    );
  }
  const stack = results.get('stack') ?? [];
  const byName = new Map<string, number[]>();
  for (const r of stack) {
    for (const f of r.attribution.breakwater) {
      byName.set(f.name, [...(byName.get(f.name) ?? []), f.usPerCall]);
    }
  }
  const hottest = [...byName]
    .map(([name, us]) => [name, us.reduce((a, b) => a + b, 0) / stack.length] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  console.log(`stack's hottest Breakwater functions (mean self µs per call):`);
  for (const [name, us] of hottest) console.log(`  ${us.toFixed(2).padStart(6)}  ${name}`);
}

const grpc = adapters.some((a) => a !== 'trpc')
  ? await spawnGrpcChaosServer({ replica: 'bench', startTimeoutMs: 30_000, maxObservations: 1 })
  : undefined;
const trpc = adapters.includes('trpc') ? await spawnTrpcServer() : undefined;
try {
  for (const adapter of adapters) {
    const address = adapter === 'trpc' ? trpc?.url : grpc?.address;
    await profileAdapter(adapter, address as string);
  }
} finally {
  await grpc?.close();
  await trpc?.close();
}
