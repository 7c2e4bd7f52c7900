import { setTimeout as wait } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { closedLoop, compareClosedLoop, type VariantRounds } from './closed-loop.js';

describe('closedLoop', () => {
  it('counts completed calls per second and failed calls apart', async () => {
    let n = 0;
    const r = await closedLoop(
      async () => {
        await wait(2);
        if (++n % 2 === 0) throw new Error('even');
      },
      2,
      60,
    );
    expect(r.errors).toBeGreaterThan(0);
    expect(Math.abs(r.errors - r.latencies.length)).toBeLessThanOrEqual(1);
    // Two workers, ~2 ms a call (Node may fire a timer up to 1 ms early): at most ~1000 calls/s, half of them failed.
    expect(r.throughput).toBeGreaterThan(0);
    expect(r.throughput).toBeLessThan(600);
    expect(Math.min(...r.latencies)).toBeGreaterThanOrEqual(1);
  });
});

describe('compareClosedLoop', () => {
  it('runs one variant at a time, every variant once a round, and pairs the figures', async () => {
    let active = 0;
    let overlapped = false;
    const calls: Record<string, number> = { fast: 0, slow: 0 };
    const variant = (name: string, ms: number) => async () => {
      active++;
      if (active > 4) overlapped = true;
      calls[name] = (calls[name] ?? 0) + 1;
      await (ms === 0 ? Promise.resolve() : wait(ms));
      active--;
    };
    const out = await compareClosedLoop(
      { fast: variant('fast', 0), slow: variant('slow', 4) },
      { concurrency: 4, rounds: 3, roundMs: 30, warmupMs: 5 },
    );
    // 4 workers of one variant at most: the other variant's workers never ran alongside.
    expect(overlapped).toBe(false);
    expect(Object.keys(out)).toEqual(['fast', 'slow']);
    for (const v of Object.values(out)) {
      expect(v.throughput).toHaveLength(3);
      expect(v.p99).toHaveLength(3);
      // In one process nothing measures CPU per call.
      expect(v.clientCpuUs).toEqual([]);
      expect(v.clientBytes).toEqual([]);
      expect(v.serverCpuUs).toEqual([]);
    }
    const { fast, slow } = out as Record<'fast' | 'slow', VariantRounds>;
    for (let i = 0; i < 3; i++) {
      expect(fast.throughput[i]).toBeGreaterThan(5 * (slow.throughput[i] as number));
      expect(slow.p99[i]).toBeGreaterThanOrEqual(3);
    }
  });

  it('rejects naming the variant whose calls failed', async () => {
    await expect(
      compareClosedLoop(
        {
          ok: async () => {},
          broken: async () => {
            await wait(1);
            throw new Error('refused');
          },
        },
        { concurrency: 1, rounds: 2, roundMs: 10, warmupMs: 0 },
      ),
    ).rejects.toThrow(/^broken: \d+ of \d+ calls failed$/);
  });
});
