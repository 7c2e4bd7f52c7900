import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CIRCUIT_BREAKER_OPTIONS } from '../breaker/config.js';
import { createManualClock } from '../time/manual-clock.js';
import { createHealthRegistry } from './registry.js';

const setup = (failures = 3, reset = 1000) => {
  const clock = createManualClock(10_000);
  return {
    clock,
    health: createHealthRegistry({ failureThreshold: failures, openDurationMs: reset, clock }),
  };
};

describe('createHealthRegistry: counts and the circuit', () => {
  it('opens at streak >= failures, until lastFailure + reset', () => {
    const { clock, health } = setup();
    health.failure('a');
    health.failure('a');
    expect(health.isOpen('a')).toBe(false);
    clock.advance(100);
    health.failure('a');
    expect(health.isOpen('a')).toBe(true);
    expect(health.circuitState('a')).toBe('open');
    expect(health.retryAfterMs('a')).toBe(1000);
    clock.advance(999);
    expect(health.isOpen('a')).toBe(true);
    expect(health.retryAfterMs('a')).toBe(1);
    clock.advance(1);
    // now === lastFailure + reset: no longer open.
    expect(health.isOpen('a')).toBe(false);
    expect(health.retryAfterMs('a')).toBe(0);
  });

  it('after reset the streak is kept: the next failure re-opens at once', () => {
    const { clock, health } = setup();
    for (let i = 0; i < 3; i++) health.failure('a');
    clock.advance(1000);
    expect(health.isOpen('a')).toBe(false);
    expect(health.circuitState('a')).toBe('half-open');
    expect(health.snapshot().a?.streak).toBe(3);
    health.failure('a');
    expect(health.isOpen('a')).toBe(true);
    expect(health.snapshot().a).toMatchObject({ streak: 4, openUntil: clock() + 1000 });
  });

  it('after reset a success closes for good: a full streak is needed again', () => {
    const { clock, health } = setup();
    for (let i = 0; i < 3; i++) health.failure('a');
    clock.advance(1000);
    health.success('a');
    expect(health.circuitState('a')).toBe('closed');
    health.failure('a');
    health.failure('a');
    expect(health.isOpen('a')).toBe(false);
    health.failure('a');
    expect(health.isOpen('a')).toBe(true);
  });

  it('a failure while open restarts the cool-down from now', () => {
    const { clock, health } = setup();
    for (let i = 0; i < 3; i++) health.failure('a');
    clock.advance(600);
    health.failure('a');
    clock.advance(600);
    expect(health.isOpen('a')).toBe(true);
    expect(health.snapshot().a?.openUntil).toBe(10_000 + 600 + 1000);
    clock.advance(400);
    expect(health.isOpen('a')).toBe(false);
  });

  it('a success while open closes it at once', () => {
    const { health } = setup();
    for (let i = 0; i < 3; i++) health.failure('a');
    expect(health.isOpen('a')).toBe(true);
    health.success('a', 5);
    expect(health.isOpen('a')).toBe(false);
    expect(health.snapshot().a).toMatchObject({ ok: 1, fail: 3, streak: 0, openUntil: 0 });
  });

  it('keepStreak counts the success but leaves streak and circuit alone', () => {
    const { health } = setup();
    for (let i = 0; i < 3; i++) health.failure('a');
    health.success('a', 40, { keepStreak: true });
    expect(health.isOpen('a')).toBe(true);
    expect(health.snapshot().a).toMatchObject({ ok: 1, fail: 3, streak: 3, latency: 40 });
    health.failure('b');
    health.failure('b');
    health.success('b', undefined, { keepStreak: true });
    health.failure('b');
    expect(health.isOpen('b')).toBe(true);
  });

  it('settle confirms a deferred success: streak 0, circuit closed', () => {
    const { health } = setup();
    for (let i = 0; i < 3; i++) health.failure('a');
    health.success('a', 10, { keepStreak: true });
    health.settle('a');
    expect(health.isOpen('a')).toBe(false);
    expect(health.snapshot().a).toMatchObject({ ok: 1, fail: 3, streak: 0 });
    health.failure('a');
    expect(health.isOpen('a')).toBe(false);
  });

  it('successRate = (ok + 1) / (ok + fail + 1); 1 for an unknown name', () => {
    const { health } = setup();
    expect(health.successRate('nobody')).toBe(1);
    health.success('a');
    health.success('a');
    health.failure('a');
    expect(health.successRate('a')).toBe(3 / 4);
  });

  it('latency: first sample as is, then 0.7 × previous + 0.3 × ms', () => {
    const { health } = setup();
    expect(health.latency('a')).toBeUndefined();
    health.success('a');
    expect(health.latency('a')).toBeUndefined();
    health.success('a', 100);
    expect(health.latency('a')).toBe(100);
    health.success('a', 200);
    expect(health.latency('a')).toBeCloseTo(130, 10);
    health.success('a', 30);
    expect(health.latency('a')).toBeCloseTo(0.7 * 130 + 0.3 * 30, 10);
    expect(() => health.success('a', -1)).toThrow(/ms must be >= 0/);
  });

  it('snapshot lists every provider that recorded anything, judged now', () => {
    const { clock, health } = setup();
    health.success('up', 12);
    for (let i = 0; i < 3; i++) health.failure('down');
    health.success('slow', 80, { keepStreak: true });
    expect(health.snapshot()).toEqual({
      up: { ok: 1, fail: 0, streak: 0, latency: 12, openUntil: 0, healthy: true },
      down: { ok: 0, fail: 3, streak: 3, latency: undefined, openUntil: 11_000, healthy: false },
      slow: { ok: 1, fail: 0, streak: 0, latency: 80, openUntil: 0, healthy: true },
    });
    clock.advance(1000);
    expect(health.snapshot().down).toMatchObject({ openUntil: 11_000, healthy: true });
  });

  it('reading never creates an entry', () => {
    const { health } = setup();
    health.isOpen('x');
    health.circuitState('x');
    health.retryAfterMs('x');
    health.successRate('x');
    health.latency('x');
    health.settle('x');
    health.scoped({ failureThreshold: 1 }).isOpen('x');
    expect(health.snapshot()).toEqual({});
  });

  it('rejects names that are not non-empty strings', () => {
    const { health } = setup();
    expect(() => health.failure('')).toThrow(TypeError);
    expect(() => health.success(42 as unknown as string)).toThrow(/name/);
  });
});

describe('createHealthRegistry: scoped views', () => {
  it('judges the same counts by other settings; recording through it writes them', () => {
    const { clock, health } = setup(3, 1000);
    const strict = health.scoped({ failureThreshold: 1, openDurationMs: 5000 });
    health.failure('a');
    expect(health.isOpen('a')).toBe(false);
    expect(strict.isOpen('a')).toBe(true);
    strict.failure('a');
    strict.failure('a');
    expect(health.snapshot().a).toMatchObject({ fail: 3, streak: 3 });
    expect(health.isOpen('a')).toBe(true);
    clock.advance(1000);
    expect(health.isOpen('a')).toBe(false);
    expect(strict.isOpen('a')).toBe(true);
    expect(strict.snapshot().a?.openUntil).toBe(10_000 + 5000);
    strict.success('a');
    expect(health.snapshot().a?.streak).toBe(0);
    expect(strict.isOpen('a')).toBe(false);
  });

  it('a view created after the events derives its circuit from the counts', () => {
    const { clock, health } = setup(5, 1000);
    health.failure('a');
    clock.advance(300);
    health.failure('a');
    const late = health.scoped({ failureThreshold: 2, openDurationMs: 1000 });
    expect(late.isOpen('a')).toBe(true);
    expect(late.snapshot().a?.openUntil).toBe(10_300 + 1000);
    clock.advance(1000);
    expect(late.circuitState('a')).toBe('half-open');
    health.failure('a');
    expect(late.isOpen('a')).toBe(true);
  });

  it('inherits unset settings and can bring its own clock', () => {
    const { health } = setup(4, 2000);
    const other = createManualClock(0);
    const view = health.scoped({ clock: other });
    expect([view.failureThreshold, view.openDurationMs, view.clock]).toEqual([4, 2000, other]);
    expect(health.scoped().clock).toBe(health.clock);
  });
});

describe('createHealthRegistry: options', () => {
  it("defaults to the breaker's 5 failures in a row and 200 ms", () => {
    const h = createHealthRegistry({ clock: createManualClock(0) });
    expect([h.failureThreshold, h.openDurationMs]).toEqual([5, 200]);
    const { failureThreshold, openDurationMs } = DEFAULT_CIRCUIT_BREAKER_OPTIONS;
    expect([h.failureThreshold, h.openDurationMs]).toEqual([failureThreshold, openDurationMs]);
    // A streak alone opens it (no span): five failures at one instant.
    for (let i = 0; i < 5; i++) h.failure('x');
    expect([h.isOpen('x'), h.retryAfterMs('x')]).toEqual([true, 200]);
    expect(createHealthRegistry({ openDurationMs: 500 }).openDurationMs).toBe(500);
  });

  it("takes the breaker's names: the old failures/reset are refused with the new name as hint", () => {
    expect(() => createHealthRegistry({ failures: 3 } as never)).toThrow(
      'createHealthRegistry: unknown option `failures` — did you mean `failureThreshold`?',
    );
    expect(() => createHealthRegistry({ reset: 1000 } as never)).toThrow(
      'createHealthRegistry: unknown option `reset` — did you mean `openDurationMs`?',
    );
    expect(() => createHealthRegistry().scoped({ reset: 1000 } as never)).toThrow(
      'scoped: unknown option `reset` — did you mean `openDurationMs`?',
    );
  });

  it('refuses a duration string: openDurationMs is a number of ms', () => {
    expect(() => createHealthRegistry({ openDurationMs: '30s' as never })).toThrow(
      new TypeError('openDurationMs must be a number, got "30s"'),
    );
  });

  it('names the option and the value when invalid', () => {
    expect(() => createHealthRegistry({ failureThreshold: 0 })).toThrow(RangeError);
    expect(() => createHealthRegistry({ failureThreshold: 0 })).toThrow(/failureThreshold .*0/);
    expect(() => createHealthRegistry({ failureThreshold: 1.5 })).toThrow(
      /failureThreshold must be an integer/,
    );
    expect(() => createHealthRegistry({ openDurationMs: 'soon' as never })).toThrow(TypeError);
    expect(() => createHealthRegistry({ openDurationMs: 'soon' as never })).toThrow(
      /openDurationMs .*"soon"/,
    );
    expect(() => createHealthRegistry({ openDurationMs: -1 })).toThrow(RangeError);
    expect(() => createHealthRegistry({ clock: 5 as never })).toThrow(/clock must be a function/);
    expect(() => createHealthRegistry().scoped({ failureThreshold: -2 })).toThrow(
      /failureThreshold/,
    );
  });
});

type Op =
  | { kind: 'success' | 'keep' | 'settle' | 'failure'; name: 'a' | 'b' }
  | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('success', 'keep', 'settle', 'failure'),
    name: fc.constantFrom('a', 'b'),
  }) as fc.Arbitrary<Op>,
  fc.record({
    kind: fc.constant('advance'),
    ms: fc.integer({ min: 0, max: 1500 }),
  }) as fc.Arbitrary<Op>,
);

describe('createHealthRegistry: the SPEC formula holds for any history', () => {
  it('isOpen === streak >= failures && now < lastFailure + reset, for the registry and scoped views', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 2000 }),
        (ops, failures, reset, f2, r2) => {
          const clock = createManualClock(0);
          const health = createHealthRegistry({
            failureThreshold: failures,
            openDurationMs: reset,
            clock,
          });
          const early = health.scoped({ failureThreshold: f2, openDurationMs: r2 });
          const model = new Map<string, { streak: number; last: number }>();
          const check = (view: typeof health, f: number, r: number) => {
            for (const name of ['a', 'b']) {
              const m = model.get(name);
              const expected = m !== undefined && m.streak >= f && clock() < m.last + r;
              expect(view.isOpen(name)).toBe(expected);
            }
          };
          for (const o of ops) {
            if (o.kind === 'advance') clock.advance(o.ms);
            else {
              const m = model.get(o.name) ?? { streak: 0, last: 0 };
              if (o.kind === 'failure') {
                health.failure(o.name);
                model.set(o.name, { streak: m.streak + 1, last: clock() });
              } else if (o.kind === 'success') {
                health.success(o.name);
                model.set(o.name, { ...m, streak: 0 });
              } else if (o.kind === 'keep') {
                health.success(o.name, 1, { keepStreak: true });
                model.set(o.name, m);
              } else {
                health.settle(o.name);
                if (model.has(o.name)) model.set(o.name, { ...m, streak: 0 });
              }
            }
            check(health, failures, reset);
            check(early, f2, r2);
          }
          check(health.scoped({ failureThreshold: f2, openDurationMs: r2 }), f2, r2);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('createHealthRegistry: hot path', () => {
  it('a success on a closed circuit with no streak, and reading a closed circuit, read no clock', () => {
    let reads = 0;
    const health = createHealthRegistry({
      failureThreshold: 2,
      clock: () => {
        reads++;
        return 5000;
      },
    });
    health.success('a', 12);
    health.success('a', 8);
    expect([health.isOpen('a'), health.circuitState('a'), health.retryAfterMs('a')]).toEqual([
      false,
      'closed',
      0,
    ]);
    expect(reads).toBe(0);
    // A streak to reset is a real transition: the clock is read for it.
    health.failure('a');
    health.success('a');
    expect(reads).toBeGreaterThan(0);
    expect(health.snapshot().a).toMatchObject({ ok: 3, fail: 1, streak: 0, healthy: true });
  });
});
