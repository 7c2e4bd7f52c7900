/**
 * Closed-loop throughput: `concurrency` workers each start their next call as
 * soon as the previous one settles, for `durationMs`. Used for adapter
 * overhead, where the question is "how many calls per second does the same
 * client get with and without the stack", not behaviour under a fixed rate.
 */

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
