import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isDeadlineTimerError } from '../errors/deadline-timer-error.js';
import { tick } from '../test-helpers/async.js';
import { createManualClock } from '../time/manual-clock.js';
import { grainOf, TimerWheel, WheelEntry } from './timer-wheel.js';

class Probe extends WheelEntry {
  expiredAt: number | undefined;
  timerError: Error | undefined;
  constructor(
    readonly label: string,
    readonly now: () => number = () => performance.now(),
  ) {
    super();
  }
  expire(timerError: Error | undefined): Error {
    this.expiredAt = this.now();
    this.timerError = timerError;
    return timerError ?? new Error(this.label);
  }
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('TimerWheel', () => {
  it('expires entries in deadline order on one host timer; cancelled ones never fire', async () => {
    const wheel = new TimerWheel();
    const late = new Probe('late');
    const early = new Probe('early');
    const cancelled = new Probe('cancelled');
    const start = performance.now();
    wheel.schedule(late, 40);
    wheel.schedule(early, 10);
    wheel.schedule(cancelled, 10);
    expect(wheel.size).toBe(3);
    wheel.cancel(cancelled);
    wheel.cancel(cancelled);
    expect(wheel.size).toBe(2);
    await wait(70);
    expect(cancelled.expiredAt).toBeUndefined();
    expect((early.expiredAt as number) - start).toBeGreaterThanOrEqual(9);
    expect(late.expiredAt as number).toBeGreaterThan(early.expiredAt as number);
    expect((late.expiredAt as number) - start).toBeGreaterThanOrEqual(39);
    expect(wheel.size).toBe(0);
  });

  it('groups entries due at the same tick in one slot; a cancelled member never fires', async () => {
    // Time is pinned to one millisecond so both entries land in the same slot; the
    // host timer still fires, and `fire` then sees the later reading.
    let now = 1000;
    const wheel = new TimerWheel({ now: () => now });
    const a = new Probe('a');
    const b = new Probe('b');
    wheel.schedule(a, 5);
    wheel.schedule(b, 5);
    expect(a.wheelSlot).toBeDefined();
    expect(b.wheelSlot).toBe(a.wheelSlot);
    wheel.cancel(a);
    now = 1006;
    await wait(30);
    expect(a.expiredAt).toBeUndefined();
    expect(b.expiredAt).toBeDefined();
    expect(wheel.size).toBe(0);
  });

  it('keeps an emptied slot for a later member of that slot until its tick', () => {
    let now = 1000;
    const wheel = new TimerWheel({ now: () => now });
    const a = new Probe('a');
    wheel.schedule(a, 10_000);
    const slot = a.wheelSlot;
    wheel.cancel(a);
    expect(wheel.size).toBe(0);
    // The slot is empty; a call joining it later (both round up to 11 008) reuses it.
    now = 1005;
    const c = new Probe('c');
    wheel.schedule(c, 10_000);
    expect(c.wheelSlot).toBe(slot);
    wheel.cancel(c);
    // Past its grain, a new slot.
    now = 1100;
    const d = new Probe('d');
    wheel.schedule(d, 10_000);
    expect(d.wheelSlot).not.toBe(slot);
    wheel.cancel(d);
    expect(wheel.size).toBe(0);
  });

  it('holds the process open while an entry is pending, and lets go at the end of the turn it empties', async () => {
    const wheel = new TimerWheel();
    const timer = () => (wheel as unknown as { handle: { hasRef(): boolean } | undefined }).handle;
    const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));
    const a = new Probe('a');
    const b = new Probe('b');
    wheel.schedule(a, 10_000);
    expect(timer()?.hasRef()).toBe(true);
    wheel.schedule(b, 20_000);
    wheel.cancel(a);
    await endOfTurn();
    expect(timer()?.hasRef()).toBe(true);
    wheel.cancel(b);
    // Back-to-back calls within one turn never toggle the hold.
    wheel.schedule(a, 10_000);
    wheel.cancel(a);
    expect(timer()?.hasRef()).toBe(true);
    await endOfTurn();
    // Left armed (cheaper than clearing it per call), but no longer foreground work.
    expect(timer()?.hasRef()).toBe(false);
    // A later entry joining without re-arming takes the hold back.
    wheel.schedule(b, 20_000);
    expect(timer()?.hasRef()).toBe(true);
    wheel.cancel(b);
    await endOfTurn();
    expect(timer()?.hasRef()).toBe(false);
  });

  it('refuses a non-finite or negative deadline, and keeps firing the others afterwards', async () => {
    const wheel = new TimerWheel();
    const bad = new Probe('bad');
    for (const ms of [Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      expect(() => wheel.schedule(bad, ms)).toThrow(RangeError);
      expect(bad.wheelSlot).toBeUndefined();
    }
    const broken = new TimerWheel({ now: () => Number.NaN });
    expect(() => broken.schedule(bad, 5)).toThrow(/finite/);
    expect(wheel.size).toBe(0);
    const good = new Probe('good');
    wheel.schedule(good, 5);
    await wait(40);
    expect(good.expiredAt).toBeDefined();
    expect(wheel.size).toBe(0);
  });

  it('rounds a long deadline up to its grain: never early, at most 1/128 of the timeout late', () => {
    expect([1, 100, 255].map(grainOf)).toEqual([1, 1, 1]);
    expect([256, 1000, 10_000, 60_000].map(grainOf)).toEqual([2, 4, 64, 256]);
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        fc.double({ min: 0.001, max: 1e7, noNaN: true }),
        (start, timeoutMs) => {
          const grain = grainOf(timeoutMs);
          expect(grain).toBeLessThanOrEqual(Math.max(1, timeoutMs / 128));
          let now = start;
          const wheel = new TimerWheel({ now: () => now });
          const probe = new Probe('p', () => now);
          wheel.schedule(probe, timeoutMs);
          // The slot's tick is the rounded deadline; read it through a second, later entry:
          // one scheduled for the same tick joins the slot.
          const tick = Math.ceil((start + timeoutMs) / grain) * grain;
          expect(tick).toBeGreaterThanOrEqual(start + timeoutMs);
          expect(tick - (start + timeoutMs)).toBeLessThan(Math.max(1, timeoutMs / 128));
          now = tick - timeoutMs;
          const joiner = new Probe('j');
          wheel.schedule(joiner, timeoutMs);
          expect(joiner.wheelSlot).toBe(probe.wheelSlot);
          wheel.cancel(probe);
          wheel.cancel(joiner);
        },
      ),
    );
  });

  it('puts calls a few ms apart with a 10 s timeout in one slot; a 300 ms deadline on the host timer is never early', async () => {
    let now = 5000;
    const wheel = new TimerWheel({ now: () => now });
    const first = new Probe('first');
    wheel.schedule(first, 10_000);
    now = 5030;
    const second = new Probe('second');
    wheel.schedule(second, 10_000);
    // Both round up to 15 040 (grain 64).
    expect(second.wheelSlot).toBe(first.wheelSlot);
    now = 5050;
    const third = new Probe('third');
    wheel.schedule(third, 10_000);
    expect(third.wheelSlot).not.toBe(first.wheelSlot);
    for (const p of [first, second, third]) wheel.cancel(p);

    const host = new TimerWheel();
    const probe = new Probe('host');
    const start = performance.now();
    host.schedule(probe, 300);
    await wait(360);
    expect(probe.expiredAt).toBeDefined();
    expect((probe.expiredAt as number) - start).toBeGreaterThanOrEqual(300);
    expect(host.size).toBe(0);
  });

  it('re-arms for an entry earlier than the armed one', async () => {
    const wheel = new TimerWheel();
    const slow = new Probe('slow');
    const fast = new Probe('fast');
    wheel.schedule(slow, 10_000);
    wheel.schedule(fast, 5);
    await wait(40);
    expect(fast.expiredAt).toBeDefined();
    expect(slow.expiredAt).toBeUndefined();
    wheel.cancel(slow);
    expect(wheel.size).toBe(0);
  });
});

describe('TimerWheel on an injected sleep', () => {
  it('expires at the exact clock time, in order, with one sleep pending at a time', async () => {
    const clock = createManualClock(1000);
    const wheel = new TimerWheel({ now: clock, sleep: clock.sleep });
    const a = new Probe('a', clock);
    const b = new Probe('b', clock);
    const c = new Probe('c', clock);
    wheel.schedule(b, 50);
    wheel.schedule(a, 20.5);
    wheel.schedule(c, 50);
    expect(wheel.size).toBe(3);
    expect(clock.pending).toBe(1);
    await clock.advanceAsync(20);
    expect(a.expiredAt).toBeUndefined();
    await clock.advanceAsync(0.5);
    expect(a.expiredAt).toBe(1020.5);
    expect(b.expiredAt).toBeUndefined();
    await clock.advanceAsync(29.5);
    expect([b.expiredAt, c.expiredAt]).toEqual([1050, 1050]);
    expect(a.timerError).toBeUndefined();
    expect(wheel.size).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('cancels its sleep as soon as the last entry leaves, and re-arms for the next one', async () => {
    const clock = createManualClock(0);
    const wheel = new TimerWheel({ now: clock, sleep: clock.sleep });
    const a = new Probe('a', clock);
    const b = new Probe('b', clock);
    wheel.schedule(a, 100);
    wheel.schedule(b, 200);
    wheel.cancel(a);
    expect(clock.pending).toBe(1);
    wheel.cancel(b);
    expect(clock.pending).toBe(0);
    wheel.schedule(a, 10);
    await clock.advanceAsync(10);
    expect(a.expiredAt).toBe(10);
    expect(b.expiredAt).toBeUndefined();
    expect(clock.pending).toBe(0);
  });

  it('treats a resolved sleep as authoritative even when the clock lags', async () => {
    const now = 0;
    const wheel = new TimerWheel({ now: () => now, sleep: () => Promise.resolve() });
    const a = new Probe('a');
    const b = new Probe('b');
    wheel.schedule(a, 30);
    wheel.schedule(b, 60);
    await tick();
    expect(a.expiredAt).toBeDefined();
    expect(b.expiredAt).toBeDefined();
    expect(wheel.size).toBe(0);
  });

  it('fails every pending entry with DeadlineTimerError when the sleep rejects or throws', async () => {
    const cause = new Error('timer broken');
    for (const sleep of [
      () => Promise.reject(cause),
      () => {
        throw cause;
      },
    ]) {
      const wheel = new TimerWheel({ now: () => 0, sleep });
      const a = new Probe('a');
      const b = new Probe('b');
      wheel.schedule(a, 30);
      wheel.schedule(b, 60);
      await tick();
      for (const p of [a, b]) {
        expect(isDeadlineTimerError(p.timerError)).toBe(true);
        expect(p.timerError?.cause).toBe(cause);
      }
      expect(wheel.size).toBe(0);
    }
  });
});
