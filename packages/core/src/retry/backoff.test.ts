import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fixedRandom, sequenceRandom } from '../time/random.js';
import { type BackoffOptions, createBackoff, MAX_BACKOFF_DELAY_MS } from './backoff.js';

describe('createBackoff schedules', () => {
  it('linear: n × base, capped by maxDelayMs', () => {
    const b = createBackoff({ baseDelayMs: 100, maxDelayMs: 250, jitter: 'none' });
    expect([1, 2, 3, 4].map((n) => b.baseFor(n))).toEqual([100, 200, 250, 250]);
    expect(b.delayFor(2)).toBe(200);
  });

  it('exponential: base × factor^(n−1), capped by maxDelayMs', () => {
    const b = createBackoff({
      baseDelayMs: 100,
      strategy: 'exponential',
      factor: 3,
      maxDelayMs: 1000,
      jitter: 'none',
    });
    expect([1, 2, 3, 4].map((n) => b.baseFor(n))).toEqual([100, 300, 900, 1000]);
  });

  it('additive jitter: fixedRandom(0) gives exactly baseDelayMs, the span is jitterRatio × base', () => {
    expect(createBackoff({ baseDelayMs: 1000, random: fixedRandom(0) }).delayFor(1)).toBe(1000);
    const b = createBackoff({ baseDelayMs: 1000, jitterRatio: 0.2, random: fixedRandom(0.5) });
    expect(b.delayFor(2)).toBe(2000 + 0.5 * 0.2 * 1000);
    expect(b.baseFor(2)).toBe(2000);
    expect(b.maxFor(2)).toBe(2200);
  });

  it('additive jitter stays in [schedule, schedule + ratio × base)', () => {
    const b = createBackoff({ baseDelayMs: 100, strategy: 'exponential', maxDelayMs: 1000 });
    for (let i = 0; i < 200; i++) {
      const d = b.delayFor(3);
      expect(d).toBeGreaterThanOrEqual(400);
      expect(d).toBeLessThan(450);
    }
  });

  it('full jitter: random × schedule in [0, schedule); baseFor is the cap', () => {
    const b = createBackoff({
      baseDelayMs: 500,
      strategy: 'exponential',
      maxDelayMs: 5000,
      jitter: 'full',
      random: sequenceRandom([0, 0.5, 0.999]),
    });
    expect(b.delayFor(3)).toBe(0);
    expect(b.delayFor(3)).toBe(1000);
    expect(b.delayFor(3)).toBeLessThan(2000);
    expect(b.baseFor(3)).toBe(2000);
    expect(b.maxFor(3)).toBe(2000);
  });

  it('proportional jitter: schedule × [1 − ratio, 1 + ratio), 0.2 by default (gRFC A6)', () => {
    const at = (r: number, options: Partial<BackoffOptions> = {}) =>
      createBackoff({
        baseDelayMs: 100,
        strategy: 'exponential',
        maxDelayMs: 300,
        jitter: 'proportional',
        random: fixedRandom(r),
        ...options,
      });
    expect([0, 0.5].map((r) => at(r).delayFor(2))).toEqual([160, 200]);
    expect(at(0.999).delayFor(2)).toBeLessThan(240);
    // The cap bounds the schedule; the jitter spreads around it, as gRPC does.
    expect(at(0).baseFor(3)).toBe(300);
    expect(at(0).maxFor(3)).toBeCloseTo(360);
    expect(at(0, { jitterRatio: 0.1 }).maxFor(1)).toBeCloseTo(110);
    expect(() => at(0, { jitterRatio: 1.5 })).toThrow(/jitterRatio must be <= 1/);
  });

  it('totalMaxFor sums maxFor(1 … attempts − 1)', () => {
    const b = createBackoff({
      baseDelayMs: 500,
      strategy: 'exponential',
      factor: 2,
      maxDelayMs: 5000,
      jitter: 'full',
    });
    expect(b.totalMaxFor(3)).toBe(1500);
    expect(b.totalMaxFor(1)).toBe(0);
    // 500 + 1000 + 2000 + 4000 + 5000 × 3 (capped)
    expect(b.totalMaxFor(8)).toBe(22_500);
  });

  it('budget: attempts becomes budgetedAttempts; an exceeded maxTotalDelayMs throws', () => {
    const options = {
      baseDelayMs: 500,
      strategy: 'exponential',
      maxDelayMs: 5000,
      jitter: 'full',
      attempts: 3,
    } as const;
    expect(createBackoff({ ...options, maxTotalDelayMs: 1500 }).budgetedAttempts).toBe(3);
    expect(createBackoff({ baseDelayMs: 1 }).budgetedAttempts).toBeUndefined();
    expect(() => createBackoff({ ...options, maxTotalDelayMs: 1499 })).toThrow(
      /maxTotalDelayMs 1499 is exceeded.*1500/,
    );
    expect(() => createBackoff({ baseDelayMs: 1, maxTotalDelayMs: 10 })).toThrow(/needs attempts/);
  });

  it('decorrelated jitter grows from the previous delay within [base, previous × factor)', () => {
    const b = createBackoff({
      baseDelayMs: 100,
      jitter: 'decorrelated',
      maxDelayMs: 10_000,
      random: fixedRandom(0.5),
    });
    expect(b.factor).toBe(3);
    const d1 = b.delayFor(1);
    expect(d1).toBe(100 + 0.5 * (300 - 100));
    const d2 = b.delayFor(2, d1);
    expect(d2).toBe(100 + 0.5 * (d1 * 3 - 100));
    expect(b.maxFor(2)).toBe(900);
    // A previous delay beyond what retry n − 1 could draw is clamped, so maxFor holds.
    expect(b.delayFor(2, 1e9)).toBeLessThanOrEqual(b.maxFor(2));
    expect(b.baseFor(5)).toBe(100);
  });

  it('is immutable', () => {
    const b = createBackoff({ baseDelayMs: 10 });
    expect(Object.isFrozen(b)).toBe(true);
  });
});

describe('createBackoff validation names the option', () => {
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['negative base', { baseDelayMs: -1 }, /baseDelayMs must be >= 0, got -1/],
    ['NaN base', { baseDelayMs: Number.NaN }, /baseDelayMs must be a number, got NaN/],
    ['missing base', {}, /baseDelayMs/],
    [
      'unknown strategy',
      { baseDelayMs: 1, strategy: 'fibonacci' },
      /strategy must be one of.*"fibonacci"/,
    ],
    ['unknown jitter', { baseDelayMs: 1, jitter: 'half' }, /jitter must be one of.*"half"/],
    ['factor < 1', { baseDelayMs: 1, factor: 0.5 }, /factor must be >= 1, got 0.5/],
    ['negative max', { baseDelayMs: 1, maxDelayMs: -5 }, /maxDelayMs must be >= 0/],
    ['jitterRatio with full', { baseDelayMs: 1, jitter: 'full', jitterRatio: 0.1 }, /jitterRatio/],
    ['negative jitterRatio', { baseDelayMs: 1, jitterRatio: -0.1 }, /jitterRatio must be >= 0/],
    [
      'non-integer attempts',
      { baseDelayMs: 1, attempts: 2.5 },
      /attempts must be an integer, got 2.5/,
    ],
    ['zero attempts', { baseDelayMs: 1, attempts: 0 }, /attempts must be >= 1/],
    ['random not a function', { baseDelayMs: 1, random: 0.5 }, /random must be a function/],
  ];
  it.each(bad)('%s', (_label, options, message) => {
    expect(() => createBackoff(options as never)).toThrow(message);
  });

  it('attempt numbers must be integers >= 1', () => {
    const b = createBackoff({ baseDelayMs: 1 });
    expect(() => b.delayFor(0)).toThrow(RangeError);
    expect(() => b.maxFor(1.5)).toThrow(RangeError);
    expect(() => b.totalMaxFor(0)).toThrow(/totalMaxFor/);
  });
});

describe('createBackoff properties', () => {
  const config = fc.record({
    baseDelayMs: fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constant(1e300)),
    strategy: fc.constantFrom('linear', 'exponential'),
    factor: fc.oneof(fc.double({ min: 1, max: 1e3, noNaN: true }), fc.constant(1e300)),
    maxDelayMs: fc.option(fc.double({ min: 0, max: 1e9, noNaN: true }), { nil: undefined }),
    jitter: fc.constantFrom('additive', 'full', 'decorrelated', 'proportional', 'none'),
    r: fc.double({ min: 0, max: 0.999_999, noNaN: true }),
  });

  it('delays are finite and within [0, maxFor(n)] for n up to 10^6', () => {
    fc.assert(
      fc.property(config, fc.integer({ min: 1, max: 1_000_000 }), (c, n) => {
        const { r, maxDelayMs, ...rest } = c;
        const b = createBackoff({
          ...rest,
          ...(maxDelayMs === undefined ? {} : { maxDelayMs }),
          random: () => r,
        } as never);
        const max = b.maxFor(n);
        const d = b.delayFor(n, n > 1 ? b.delayFor(n - 1) : undefined);
        expect(Number.isFinite(d)).toBe(true);
        expect(Number.isFinite(b.baseFor(n))).toBe(true);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(max);
        expect(max).toBeLessThanOrEqual(MAX_BACKOFF_DELAY_MS);
      }),
      { numRuns: 500 },
    );
  });

  it('totalMaxFor is finite for long chains', () => {
    const b = createBackoff({ baseDelayMs: 1000, strategy: 'exponential', factor: 10 });
    expect(Number.isFinite(b.totalMaxFor(1_000_000))).toBe(true);
  });
});
