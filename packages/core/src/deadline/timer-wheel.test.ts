import { describe, expect, it } from 'vitest';
import { isDeadlineTimerError } from '../errors/deadline-timer-error.js';
import { tick } from '../test-helpers/async.js';
import { createManualClock } from '../time/manual-clock.js';
import { TimerWheel, WheelEntry } from './timer-wheel.js';

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

  it('shares one signal per slot and aborts it only when a member times out', async () => {
    // Time is pinned to one millisecond so both entries land in the same slot; the
    // host timer still fires, and `fire` then sees the later reading.
    let now = 1000;
    const wheel = new TimerWheel({ now: () => now });
    const a = new Probe('a');
    const b = new Probe('b');
    wheel.schedule(a, 5);
    wheel.schedule(b, 5);
    const sa = wheel.sharedSignal(a);
    expect(wheel.sharedSignal(b)).toBe(sa);
    wheel.cancel(a);
    now = 1006;
    await wait(30);
    expect(a.expiredAt).toBeUndefined();
    expect(sa.aborted).toBe(true);
    expect((sa.reason as Error).message).toBe('b');

    const c = new Probe('c');
    wheel.schedule(c, 5);
    const sc = wheel.sharedSignal(c);
    expect(sc).not.toBe(sa);
    wheel.cancel(c);
    now = 1020;
    await wait(30);
    expect(sc.aborted).toBe(false);
  });

  it('lets an emptied slot drop its signal, and a later member of that slot gets a new one', () => {
    const now = 1000;
    const wheel = new TimerWheel({ now: () => now });
    const a = new Probe('a');
    const b = new Probe('b');
    wheel.schedule(a, 10_000);
    wheel.schedule(b, 10_000);
    const shared = wheel.sharedSignal(a);
    wheel.cancel(a);
    // A member is still pending: same signal.
    expect(wheel.sharedSignal(b)).toBe(shared);
    wheel.cancel(b);
    const c = new Probe('c');
    wheel.schedule(c, 10_000);
    const fresh = wheel.sharedSignal(c);
    expect(fresh).not.toBe(shared);
    expect(shared.aborted).toBe(false);
    wheel.cancel(c);
    expect(wheel.size).toBe(0);
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
    expect(wheel.sharesSignals).toBe(false);
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
