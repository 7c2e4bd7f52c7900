import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { checkFaults, type LatencySpec, planAttempt } from './faults.js';
import { seededRandom } from './seeded-random.js';

const facts = (attempt = 1, method = 'Unary') => ({
  path: `/breakwater.chaos.v1.Echo/${method}`,
  method,
  attempt,
});

function quantile(values: number[], q: number): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

describe('planAttempt', () => {
  it('fails at the configured rate with a seeded random source', () => {
    const random = seededRandom(42);
    const rules = [{ rate: 0.3, status: status.UNAVAILABLE }];
    let failed = 0;
    for (let i = 0; i < 10_000; i++) if (planAttempt(rules, facts(), random).fail) failed++;
    expect(failed / 10_000).toBeGreaterThan(0.28);
    expect(failed / 10_000).toBeLessThan(0.32);
  });

  it('the same seed gives the same schedule', () => {
    const run = () => {
      const random = seededRandom(7);
      return Array.from(
        { length: 50 },
        () => planAttempt([{ rate: 0.5 }], facts(), random).fail !== undefined,
      );
    };
    expect(run()).toEqual(run());
  });

  it('fails only the first k attempts of a call', () => {
    const rules = [{ firstAttempts: 2, status: status.UNAVAILABLE }];
    const random = seededRandom(1);
    expect([1, 2, 3, 4].map((n) => planAttempt(rules, facts(n), random).fail?.code)).toEqual([
      status.UNAVAILABLE,
      status.UNAVAILABLE,
      undefined,
      undefined,
    ]);
  });

  it('picks a range of attempts with fromAttempt and firstAttempts', () => {
    const rules = [
      { fromAttempt: 2, firstAttempts: 2, status: status.UNAVAILABLE },
      { fromAttempt: 4, status: status.INTERNAL },
    ];
    const random = seededRandom(1);
    expect([1, 2, 3, 4, 5].map((n) => planAttempt(rules, facts(n), random).fail?.code)).toEqual([
      undefined,
      status.UNAVAILABLE,
      undefined,
      status.INTERNAL,
      status.INTERNAL,
    ]);
    expect(() => checkFaults([{ fromAttempt: 0 }])).toThrow(/faults\[0\]\.fromAttempt/);
  });

  it('plans a death after the response message as an outcome of its own', () => {
    const plan = planAttempt([{ dieAfterMessage: true }], facts(), seededRandom(1));
    expect(plan).toMatchObject({ dieAfterMessage: true, fail: undefined, hang: false });
  });

  it('matches methods by short name or full path', () => {
    const random = seededRandom(1);
    const byName = [{ methods: ['UnaryUnsafe'], status: status.INTERNAL }];
    expect(planAttempt(byName, facts(1, 'Unary'), random).fail).toBeUndefined();
    expect(planAttempt(byName, facts(1, 'UnaryUnsafe'), random).fail?.code).toBe(status.INTERNAL);
    const byPath = [{ methods: ['/breakwater.chaos.v1.Echo/Unary'], hang: true }];
    expect(planAttempt(byPath, facts(), random).hang).toBe(true);
  });

  it('carries pushback as text, malformed values included', () => {
    const random = seededRandom(1);
    const plan = planAttempt(
      [{ status: status.RESOURCE_EXHAUSTED, pushbackMs: 'soon' }],
      facts(),
      random,
    );
    expect(plan.fail).toEqual({
      code: status.RESOURCE_EXHAUSTED,
      details: 'chaos: RESOURCE_EXHAUSTED',
      pushback: 'soon',
    });
  });

  it('adds latency from every matching rule; the first outcome wins', () => {
    const random = seededRandom(1);
    const plan = planAttempt(
      [
        { latency: { kind: 'fixed', ms: 10 } },
        { latency: { kind: 'fixed', ms: 5 }, status: status.ABORTED },
        { status: status.INTERNAL },
      ],
      facts(),
      random,
    );
    expect(plan.delayMs).toBe(15);
    expect(plan.fail?.code).toBe(status.ABORTED);
  });

  it('samples the latency distributions with the right quantiles', () => {
    const random = seededRandom(3);
    const sample = (latency: LatencySpec) =>
      Array.from({ length: 20_000 }, () => planAttempt([{ latency }], facts(), random).delayMs);
    const uniform = sample({ kind: 'uniform', minMs: 100, maxMs: 200 });
    expect(quantile(uniform, 0.5)).toBeGreaterThan(145);
    expect(quantile(uniform, 0.5)).toBeLessThan(155);
    expect(Math.min(...uniform)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...uniform)).toBeLessThan(200);
    // "5% of calls +300 ms": p90 sits at the base, p99 in the tail.
    const tail = sample({ kind: 'tail', percent: 5, extraMs: 300, baseMs: 10 });
    expect(quantile(tail, 0.9)).toBe(10);
    expect(quantile(tail, 0.99)).toBe(310);
    const share = tail.filter((d) => d > 10).length / tail.length;
    expect(share).toBeGreaterThan(0.04);
    expect(share).toBeLessThan(0.06);
  });
});

describe('checkFaults', () => {
  it('names the bad field', () => {
    expect(() => checkFaults([{ rate: 2 }])).toThrow(/faults\[0\]\.rate/);
    expect(() => checkFaults([{}, { firstAttempts: -1 }])).toThrow(/faults\[1\]\.firstAttempts/);
    expect(() => checkFaults([{ latency: { kind: 'uniform', minMs: 5, maxMs: 1 } }])).toThrow(
      RangeError,
    );
    expect(() => checkFaults([{ status: 99 as never }])).toThrow(/status/);
  });
});
