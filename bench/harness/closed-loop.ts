/**
 * Closed-loop throughput: `concurrency` workers each start their next call as
 * soon as the previous one settles, for `durationMs`. Used for adapter
 * overhead, where the question is "how many calls per second does the same
 * client get with and without the stack", not behaviour under a fixed rate.
 */

import { latencySummary, runInterleaved } from './stats.js';

/** What one closed-loop round measured. */
export interface ClosedLoopRound {
  /** Calls completed per second. */
  throughput: number;
  /** Latency of every completed call, ms. */
  latencies: number[];
  /** Calls that rejected. */
  errors: number;
}

/** Runs `call` from `concurrency` workers for `durationMs`. */
export async function closedLoop(
  call: () => Promise<unknown>,
  concurrency: number,
  durationMs: number,
): Promise<ClosedLoopRound> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + durationMs;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await call();
        latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - start;
  return { throughput: (latencies.length * 1000) / elapsed, latencies, errors };
}

/** Per-round figures of one variant of {@link compareClosedLoop}, in round order. */
export interface VariantRounds {
  /** Calls completed per second in each round. */
  throughput: number[];
  /** Nearest-rank p99 latency of each round, ms. */
  p99: number[];
}

/** Options of {@link compareClosedLoop}. */
export interface CompareOptions {
  /** Workers per variant. */
  concurrency: number;
  /** Measured rounds; each runs every variant once. */
  rounds: number;
  /** Length of one variant's run within a round, ms. */
  roundMs: number;
  /** Unmeasured run of each variant before the first round (connections, JIT), ms. Defaults to 300. */
  warmupMs?: number;
}

/**
 * Closed-loop rounds of several variants (`name → one call`), interleaved by
 * `runInterleaved` (one variant at a time, the order rotating every round), so
 * the per-round figures of any two variants can be paired. Rejects, naming the
 * variant, when any measured call fails: failed calls would distort the
 * throughput of a comparison meant for a healthy server.
 */
export async function compareClosedLoop(
  variants: Readonly<Record<string, () => Promise<unknown>>>,
  options: CompareOptions,
): Promise<Record<string, VariantRounds>> {
  const { concurrency, rounds, roundMs, warmupMs = 300 } = options;
  for (const call of Object.values(variants)) await closedLoop(call, concurrency, warmupMs);
  const p99: Record<string, number[]> = Object.fromEntries(
    Object.keys(variants).map((name) => [name, []]),
  );
  const round = (name: string, call: () => Promise<unknown>) => async () => {
    const r = await closedLoop(call, concurrency, roundMs);
    if (r.errors > 0) {
      throw new Error(`${name}: ${r.errors} of ${r.errors + r.latencies.length} calls failed`);
    }
    p99[name]?.push(latencySummary(r.latencies).p99 ?? Number.NaN);
    return r.throughput;
  };
  const throughput = await runInterleaved(
    Object.fromEntries(Object.entries(variants).map(([name, call]) => [name, round(name, call)])),
    rounds,
  );
  return Object.fromEntries(
    Object.entries(throughput).map(([name, t]) => [name, { throughput: t, p99: p99[name] ?? [] }]),
  );
}
