/**
 * Micro-benchmark helpers: time a batch of awaited calls and measure bytes
 * allocated per call.
 */

import { pairedRatios, type Spread, spread } from '@breakwater/chaos';
import { runInterleaved } from './interleave.js';

/** A call under test: one awaited operation. */
export type Call = () => Promise<unknown>;

/** Cost per call of one batch of `n` sequential awaited calls. */
export interface BatchCost {
  /** Wall-clock ns per call. */
  wallNs: number;
  /** CPU ns per call (user + system time of this process). */
  cpuNs: number;
}

/**
 * Times one batch of `n` sequential awaited calls, by the wall clock and by
 * the process's CPU time. On a shared, overloaded machine the wall clock also
 * counts the time other processes held the core; CPU time does not.
 */
export async function batchCost(call: Call, n: number): Promise<BatchCost> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await call();
  const wall = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(c0);
  return { wallNs: wall / n, cpuNs: ((cpu.user + cpu.system) * 1000) / n };
}

/** Calls per batch so that one batch takes about `targetMs` of CPU time (at least 1000 calls). */
export async function calibrate(call: Call, targetMs: number): Promise<number> {
  let n = 1000;
  for (;;) {
    const { cpuNs } = await batchCost(call, n);
    const ms = (cpuNs * n) / 1e6;
    if (ms >= targetMs / 4 || n >= 1e7)
      return Math.max(1000, Math.round((n * targetMs) / Math.max(ms, 0.001)));
    n *= 4;
  }
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * Bytes allocated per call: collect garbage, run `n` calls, read the heap.
 * `n` is small enough that no scavenge runs inside the batch (a scavenge
 * would make the delta too small, so the largest of `repeats` batches is
 * closest to the truth — a batch can lose bytes to GC, never gain them).
 * `undefined` without `--expose-gc`.
 */
export async function bytesPerCall(call: Call, n = 2000, repeats = 5): Promise<number | undefined> {
  if (!gc) return undefined;
  for (let i = 0; i < n; i++) await call(); // warm: inline caches, lazily built state
  const deltas: number[] = [];
  for (let r = 0; r < repeats; r++) {
    gc();
    gc();
    const h0 = process.memoryUsage().heapUsed;
    for (let i = 0; i < n; i++) await call();
    deltas.push((process.memoryUsage().heapUsed - h0) / n);
  }
  return Math.max(0, Math.max(...deltas));
}

/** Result of one variant in a micro group. */
export interface MicroVariant {
  name: string;
  /** Which library; `floor` is a hand-written lower bound of the contract, not a library. */
  lib: 'baseline' | 'breakwater' | 'cockatiel' | 'opossum' | 'floor';
  /** CPU ns per call over the rounds. */
  ns: Spread;
  /** Wall-clock ns per call over the rounds. */
  wallNs: Spread;
  /** Calls per batch. */
  batch: number;
  /** Per-round ratio to the group's baseline (bare await). */
  vsBare: Spread;
  /** Per-round ratio to the group's Breakwater variant (`> 1` = slower than Breakwater). */
  vsBreakwater: Spread | undefined;
  bytesPerCall: number | undefined;
}

/** A variant to measure. The first `breakwater` variant is the group's reference. */
export interface MicroCase {
  name: string;
  lib: MicroVariant['lib'];
  call: Call;
}

/** Options of {@link runMicroGroup}. */
export interface MicroGroupOptions {
  rounds: number;
  /** CPU time one batch should take (calls per batch are calibrated per variant). */
  batchMs: number;
}

/**
 * Times every case in interleaved rounds (see `runInterleaved`): each round
 * runs one batch of every case back to back, so a busy period of the shared
 * machine lands on all of them. Ratios are taken round by round.
 */
export async function runMicroGroup(
  cases: MicroCase[],
  options: MicroGroupOptions,
): Promise<MicroVariant[]> {
  // Calibrating also warms every case, so the JIT has settled before round 0.
  const sizes = new Map<string, number>();
  for (const c of cases) sizes.set(c.name, await calibrate(c.call, options.batchMs));
  const variants: Record<string, () => Promise<number>> = {};
  const walls: Record<string, number[]> = {};
  for (const c of cases) {
    walls[c.name] = [];
    // An untimed half batch first: switching from another library's code can deoptimize shared
    // runtime paths (promises, timers), and the young garbage the previous variant left is
    // scavenged there, not billed to this batch. (No forced full GC: it promotes long-lived
    // structures such as the shared timer wheel to old space and makes the next batch pay write
    // barriers a running program would not — withTimeout measured 5x slower after each gc().)
    variants[c.name] = async () => {
      const n = sizes.get(c.name) as number;
      await batchCost(c.call, n >> 1);
      const cost = await batchCost(c.call, n);
      walls[c.name]?.push(cost.wallNs);
      return cost.cpuNs;
    };
  }
  const rounds = await runInterleaved(variants, options.rounds);
  const bare = rounds[cases.find((c) => c.lib === 'baseline')?.name ?? ''];
  const bw = rounds[cases.find((c) => c.lib === 'breakwater')?.name ?? ''];
  const out: MicroVariant[] = [];
  for (const c of cases) {
    const series = rounds[c.name] as number[];
    out.push({
      name: c.name,
      lib: c.lib,
      ns: spread(series),
      wallNs: spread(walls[c.name] as number[]),
      batch: sizes.get(c.name) as number,
      vsBare: bare ? spread(pairedRatios(series, bare)) : spread([]),
      vsBreakwater: bw && c.lib !== 'baseline' ? spread(pairedRatios(series, bw)) : undefined,
      bytesPerCall: await bytesPerCall(c.call),
    });
  }
  return out;
}
