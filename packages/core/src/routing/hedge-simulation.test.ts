import { describe, expect, it } from 'vitest';
import { seededRandom } from '../test-helpers/seeded-random.js';
import { createManualClock, type ManualClock } from '../time/manual-clock.js';
import { createRouter } from './router.js';
import type { RouteHedge } from './types.js';

interface SimProvider {
  id: string;
  calls: number;
  /** Latency of the next call in ms. */
  latency: () => number;
}

/** Answers after the provider's latency, or rejects early when aborted. */
function serve(p: SimProvider, clock: ManualClock, signal: AbortSignal): Promise<string> {
  p.calls++;
  return clock.sleep(p.latency(), signal).then(() => {
    if (signal.aborted) throw signal.reason;
    return p.id;
  });
}

/** Base latency: 8–12 ms with a light tail, per provider stream. */
function base(rng: () => number): number {
  return 8 + 4 * rng() + (rng() < 0.01 ? 3 * rng() : 0);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

async function simulate(hedge: RouteHedge | undefined, requests: number) {
  const clock = createManualClock();
  const rngA = seededRandom(1);
  const rngB = seededRandom(2);
  const rngC = seededRandom(3);
  const providers: SimProvider[] = [
    // The preferred provider is slow on 5% of its calls, by +200 ms.
    { id: 'a', calls: 0, latency: () => base(rngA) + (rngA() < 0.05 ? 200 : 0) },
    { id: 'b', calls: 0, latency: () => base(rngB) },
    { id: 'c', calls: 0, latency: () => base(rngC) },
  ];
  const router = createRouter({
    providers: providers.map((p) => ({ id: p.id, resource: p })),
    clock,
    sleep: clock.sleep,
    ...(hedge ? { hedge } : {}),
  });
  const latencies: number[] = [];
  for (let i = 0; i < requests; i++) {
    const start = clock();
    await clock.run(router.execute((p, { signal }) => serve(p, clock, signal)));
    latencies.push(clock() - start);
  }
  latencies.sort((x, y) => x - y);
  const calls = providers.reduce((n, p) => n + p.calls, 0);
  return {
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    p999: quantile(latencies, 0.999),
    extraCalls: (calls - requests) / requests,
    pending: clock.pending,
  };
}

describe('hedging simulation (manual clock, seeded latencies)', () => {
  it('hedging at p95 cuts p99 by >= 5x with <= 10% extra calls when one of three providers is slow on 5% of calls', async () => {
    const requests = 3000;
    const plain = await simulate(undefined, requests);
    const hedged = await simulate({ percentile: 95, attempts: 2 }, requests);
    const round = (n: number) => Math.round(n * 100) / 100;
    console.log(
      `hedge simulation (${requests} requests): ` +
        `no hedging p50=${round(plain.p50)} p99=${round(plain.p99)} p99.9=${round(plain.p999)} ms; ` +
        `hedge p95 p50=${round(hedged.p50)} p99=${round(hedged.p99)} p99.9=${round(hedged.p999)} ms; ` +
        `p99 ratio=${round(plain.p99 / hedged.p99)}x extra calls=${round(hedged.extraCalls * 100)}%`,
    );
    expect(plain.extraCalls).toBe(0);
    expect(plain.p99).toBeGreaterThan(200);
    expect(plain.p99 / hedged.p99).toBeGreaterThanOrEqual(5);
    expect(hedged.extraCalls).toBeLessThanOrEqual(0.1);
    expect(hedged.extraCalls).toBeGreaterThan(0);
    expect(hedged.pending).toBe(0);
  });
});
