import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { createManualClock, type ManualClock } from '../time/manual-clock.js';
import {
  type AdaptiveLimiter,
  type AdaptiveLimiterOptions,
  createAdaptiveLimiter,
  type LimitOutcome,
  type LimitPermit,
} from './adaptive-limiter.js';
import { CRITICALITIES } from './criticality.js';

function setup(options: AdaptiveLimiterOptions = {}) {
  const clock = createManualClock(0);
  return {
    clock,
    limiter: createAdaptiveLimiter({ probeIntervalMs: Infinity, ...options, clock }),
  };
}

/** Takes every slot the limit allows (critical calls: the whole limit). */
function fill(limiter: AdaptiveLimiter): LimitPermit[] {
  const permits: LimitPermit[] = [];
  for (;;) {
    const slot = limiter.tryAcquire('critical');
    if (!slot.ok) return permits;
    permits.push(slot.value);
  }
}

/**
 * One round trip against a FIFO server with `workers` workers that each take
 * `serviceMs` per call: the client fills its limit at once, the first
 * `workers` calls are answered after `serviceMs`, the next ones after
 * waiting their turn in the server's queue.
 */
function roundTrip(
  limiter: AdaptiveLimiter,
  clock: ManualClock,
  workers: number,
  serviceMs: number,
): number {
  const permits = fill(limiter);
  for (let i = 0; i < permits.length; i += workers) {
    clock.advance(serviceMs);
    for (const p of permits.slice(i, i + workers)) p.release('answered');
  }
  return permits.length;
}

function roundTrips(
  limiter: AdaptiveLimiter,
  clock: ManualClock,
  n: number,
  workers: number,
  serviceMs: number,
): number[] {
  return Array.from({ length: n }, () => roundTrip(limiter, clock, workers, serviceMs));
}

describe('createAdaptiveLimiter — the limit follows latency (manual clock)', () => {
  it('falls from its initial limit to what a saturated server answers within tolerance', () => {
    const { clock, limiter } = setup();
    expect(limiter.limit).toBe(20);
    // 4 workers × 20 ms: 4 calls in flight answer in 20 ms, 20 in flight wait 100 ms.
    const admitted = roundTrips(limiter, clock, 60, 4, 20);
    expect(admitted[0]).toBe(20);
    const settled = admitted.slice(-20);
    // rttTolerance 1.5: latency may reach 30 ms, i.e. 6 calls in flight; never below capacity for long.
    expect(Math.max(...settled)).toBeLessThanOrEqual(7);
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(4);
  });

  it('falls when the server slows down, and recovers when it is fast again', () => {
    const { clock, limiter } = setup();
    roundTrips(limiter, clock, 60, 8, 20);
    const healthy = limiter.limit;
    expect(healthy).toBeGreaterThanOrEqual(8);
    expect(healthy).toBeLessThanOrEqual(13);

    // Half its workers are gone: latency rises at the same offered load.
    roundTrips(limiter, clock, 40, 4, 20);
    const degraded = limiter.limit;
    expect(degraded).toBeLessThanOrEqual(7);
    expect(degraded).toBeLessThan(healthy);

    roundTrips(limiter, clock, 60, 8, 20);
    expect(limiter.limit).toBeGreaterThanOrEqual(8);
  });

  it('grows by at most one per round trip while latency stays within tolerance, up to maxLimit', () => {
    const { clock, limiter } = setup({ initialLimit: 10, maxLimit: 14 });
    roundTrips(limiter, clock, 4, 1_000, 20);
    expect(limiter.limit).toBeGreaterThanOrEqual(11);
    expect(limiter.limit).toBeLessThanOrEqual(14);
    roundTrips(limiter, clock, 10, 1_000, 20);
    expect(limiter.limit).toBe(14);
  });

  it('does not grow while calls use less than half of it (an idle client learns nothing)', () => {
    const { clock, limiter } = setup({ initialLimit: 10 });
    for (let i = 0; i < 100; i++) {
      const a = limiter.tryAcquire();
      const b = limiter.tryAcquire();
      clock.advance(20);
      if (a.ok) a.value.release('answered');
      if (b.ok) b.value.release('answered');
    }
    expect(limiter.limit).toBe(10);
  });

  it('cuts by backoffRatio on a dropped call, once per round trip', () => {
    const { clock, limiter } = setup({ initialLimit: 20, backoffRatio: 0.5 });
    const permits = fill(limiter);
    clock.advance(20);
    // A wave of timeouts from calls that started together is one signal, not twenty.
    for (const p of permits) p.release('dropped');
    expect(limiter.limit).toBe(10);
    const next = fill(limiter);
    clock.advance(20);
    next[0]?.release('dropped');
    expect(limiter.limit).toBe(5);
  });

  it('takes the fastest answers of its first wave as the no-load latency', () => {
    const { clock, limiter } = setup();
    // 20 calls at once against 2 workers of 20 ms: two answer in 20 ms, the last two in 200 ms.
    roundTrip(limiter, clock, 2, 20);
    expect(limiter.limit).toBeLessThan(20);
    roundTrips(limiter, clock, 30, 2, 20);
    expect(limiter.limit).toBeLessThanOrEqual(3);
  });

  it('ignores calls cancelled by their caller: no sample, no cut', () => {
    const { clock, limiter } = setup({ initialLimit: 10 });
    roundTrip(limiter, clock, 10, 20);
    const permits = fill(limiter);
    clock.advance(1_000);
    for (const p of permits) p.release('ignored');
    expect(limiter.limit).toBe(10);
    expect(limiter.inFlight).toBe(0);
  });

  it('measures the no-load latency afresh every probeIntervalMs, holding the limit at minLimit', () => {
    const { clock, limiter } = setup({ probeIntervalMs: 10_000, probeSamples: 3, minLimit: 2 });
    roundTrips(limiter, clock, 40, 8, 20);
    const before = limiter.limit;
    // Every call now takes 50 ms however few run: the server became slower for good.
    clock.advance(10_000);
    roundTrip(limiter, clock, 1_000, 50);
    expect(limiter.limit).toBe(2);
    roundTrips(limiter, clock, 2, 1_000, 50);
    // The probe is over: the limit is back, judged against the new no-load latency of 50 ms.
    expect(limiter.limit).toBe(before);
    roundTrips(limiter, clock, 5, 1_000, 50);
    expect(limiter.limit).toBeGreaterThan(before);
  });
});

describe('createAdaptiveLimiter — criticality', () => {
  it('sheds sheddable calls first, then default ones; critical calls may fill the whole limit', () => {
    const { limiter } = setup({ initialLimit: 10 });
    const admitted = (c: 'critical' | 'default' | 'sheddable') => limiter.tryAcquire(c).ok;
    for (let i = 0; i < 5; i++) expect(admitted('sheddable')).toBe(true);
    expect(admitted('sheddable')).toBe(false);
    for (let i = 0; i < 4; i++) expect(admitted('default')).toBe(true);
    expect(admitted('default')).toBe(false);
    expect(admitted('critical')).toBe(true);
    expect(limiter.inFlight).toBe(10);
    expect(admitted('critical')).toBe(false);
    expect(limiter.refusals('sheddable')).toBe(1);
    expect(limiter.refusals('default')).toBe(1);
    expect(limiter.refusals('critical')).toBe(1);
  });

  it('refuses with a ConcurrencyLimitError naming the limit, the calls in flight and the tier', () => {
    const { limiter } = setup({ initialLimit: 2, shares: { default: 1, sheddable: 1 } });
    limiter.tryAcquire();
    limiter.tryAcquire();
    const refused = limiter.tryAcquire('sheddable');
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(isConcurrencyLimitError(refused.error)).toBe(true);
    expect(refused.error).toMatchObject({ limit: 2, inFlight: 2, criticality: 'sheddable' });
    expect(refused.error.message).toBe(
      'Concurrency limit reached (limit 2, 2 in flight, sheddable call)',
    );
  });
});

type Op =
  | { kind: 'acquire'; tier: number }
  | { kind: 'release'; index: number; outcome: LimitOutcome }
  | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('acquire' as const), tier: fc.integer({ min: 0, max: 2 }) }),
  fc.record({
    kind: fc.constant('release' as const),
    index: fc.nat(),
    outcome: fc.constantFrom<LimitOutcome>('answered', 'dropped', 'ignored'),
  }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 200 }) }),
);

describe('createAdaptiveLimiter — properties', () => {
  it('in flight never exceeds the limit at admission, and only held permits count', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 300 }),
        fc.integer({ min: 1, max: 30 }),
        (ops, initialLimit) => {
          const { clock, limiter } = setup({ initialLimit, probeIntervalMs: 1_000 });
          const held: LimitPermit[] = [];
          const released: LimitPermit[] = [];
          for (const o of ops) {
            if (o.kind === 'acquire') {
              const before = limiter.inFlight;
              const slot = limiter.tryAcquire(CRITICALITIES[o.tier]);
              if (slot.ok) {
                held.push(slot.value);
                expect(limiter.inFlight).toBeLessThanOrEqual(limiter.limit);
              } else {
                // A refused call never holds a slot.
                expect(limiter.inFlight).toBe(before);
              }
            } else if (o.kind === 'release') {
              // Released permits are picked too: a second release gives nothing back.
              const pool = o.index % 2 === 0 || released.length === 0 ? held : released;
              if (pool.length === 0) continue;
              const [p] = pool.splice(o.index % pool.length, 1) as [LimitPermit];
              p.release(o.outcome);
              released.push(p);
            } else {
              clock.advance(o.ms);
            }
            expect(limiter.inFlight).toBe(held.length);
            expect(limiter.limit).toBeGreaterThanOrEqual(1);
            expect(limiter.limit).toBeLessThanOrEqual(1_000);
          }
        },
      ),
      { seed: 34, numRuns: 300 },
    );
  });
});
