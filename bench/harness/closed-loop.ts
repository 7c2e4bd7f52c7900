/**
 * Closed-loop throughput: `concurrency` workers each start their next call as
 * soon as the previous one settles, for `durationMs`. Used for adapter
 * overhead, where the question is "how many calls per second does the same
 * client get with and without the stack", not behaviour under a fixed rate.
 */

import { summarizeLatency } from '@breakwater/chaos';
import { runInterleaved } from './interleave.js';

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

/** What a round reports when it crosses a process boundary: no latency list, its p99. */
export interface RoundFigures {
  /** Calls completed per second. */
  throughput: number;
  /** Nearest-rank p99 latency, ms (`NaN` without completed calls). */
  p99: number;
  /** Calls that rejected. */
  errors: number;
  /** Calls that completed. */
  calls: number;
  /** Client CPU time per completed call, µs (user + system of the client process), when measured. */
  clientCpuUs?: number;
  /** Bytes the client process allocated on the JS heap per completed call, when measured. */
  clientBytes?: number;
  /** Server CPU time per completed call, µs, when measured. */
  serverCpuUs?: number;
}

/** The figures of `round`. */
export function roundFigures(round: ClosedLoopRound): RoundFigures {
  return {
    throughput: round.throughput,
    p99: summarizeLatency(round.latencies).p99 ?? Number.NaN,
    errors: round.errors,
    calls: round.latencies.length,
  };
}

/** Runs one closed-loop round of a variant for the given ms (in this process or another). */
export type RoundRunner = (durationMs: number) => Promise<RoundFigures>;

/** A runner of `call` from `concurrency` workers in this process. */
export function inProcess(call: () => Promise<unknown>, concurrency: number): RoundRunner {
  return async (durationMs) => roundFigures(await closedLoop(call, concurrency, durationMs));
}

/** Per-round figures of one variant of {@link compareRounds}, in round order. */
export interface VariantRounds {
  /** Calls completed per second in each round. */
  throughput: number[];
  /** Nearest-rank p99 latency of each round, ms. */
  p99: number[];
  /** Client CPU µs per call of each round (empty when not measured). */
  clientCpuUs: number[];
  /** Client heap bytes allocated per call of each round (empty when not measured). */
  clientBytes: number[];
  /** Server CPU µs per call of each round (empty when not measured). */
  serverCpuUs: number[];
}

/** Options of {@link compareRounds}. */
export interface RoundsOptions {
  /** Measured rounds; each runs every variant once. */
  rounds: number;
  /** Length of one variant's run within a round, ms. */
  roundMs: number;
  /** Unmeasured run of each variant before the first round (connections, JIT), ms. Defaults to 300. */
  warmupMs?: number;
}

/** Options of {@link compareClosedLoop}. */
export interface CompareOptions extends RoundsOptions {
  /** Workers per variant. */
  concurrency: number;
}

/**
 * Rounds of several variants (`name → runner`), interleaved by
 * `runInterleaved` (one variant at a time, the order rotating every round), so
 * the per-round figures of any two variants can be paired. Rejects, naming the
 * variant, when any measured call fails: failed calls would distort the
 * throughput of a comparison meant for a healthy server.
 */
export async function compareRounds(
  variants: Readonly<Record<string, RoundRunner>>,
  options: RoundsOptions,
): Promise<Record<string, VariantRounds>> {
  const { rounds, roundMs, warmupMs = 300 } = options;
  for (const run of Object.values(variants)) await run(warmupMs);
  const figures: Record<string, Omit<VariantRounds, 'throughput'>> = Object.fromEntries(
    Object.keys(variants).map((name) => [
      name,
      { p99: [], clientCpuUs: [], clientBytes: [], serverCpuUs: [] },
    ]),
  );
  const round = (name: string, run: RoundRunner) => async () => {
    const r = await run(roundMs);
    if (r.errors > 0) {
      throw new Error(`${name}: ${r.errors} of ${r.errors + r.calls} calls failed`);
    }
    const mine = figures[name] as Omit<VariantRounds, 'throughput'>;
    mine.p99.push(r.p99);
    if (r.clientCpuUs !== undefined) mine.clientCpuUs.push(r.clientCpuUs);
    if (r.clientBytes !== undefined) mine.clientBytes.push(r.clientBytes);
    if (r.serverCpuUs !== undefined) mine.serverCpuUs.push(r.serverCpuUs);
    return r.throughput;
  };
  const throughput = await runInterleaved(
    Object.fromEntries(Object.entries(variants).map(([name, run]) => [name, round(name, run)])),
    rounds,
  );
  return Object.fromEntries(
    Object.entries(throughput).map(([name, t]) => [
      name,
      { throughput: t, ...(figures[name] as Omit<VariantRounds, 'throughput'>) },
    ]),
  );
}

/** {@link compareRounds} of calls run in this process, `concurrency` workers each. */
export function compareClosedLoop(
  variants: Readonly<Record<string, () => Promise<unknown>>>,
  options: CompareOptions,
): Promise<Record<string, VariantRounds>> {
  return compareRounds(
    Object.fromEntries(
      Object.entries(variants).map(([name, call]) => [name, inProcess(call, options.concurrency)]),
    ),
    options,
  );
}
