import { describe, expect, it } from 'vitest';
import { TimerWheel, WheelEntry } from './timer-wheel.js';

class Probe extends WheelEntry {
  expiredAt: number | undefined;
  constructor(readonly label: string) {
    super();
  }
  expire(): Error {
    this.expiredAt = performance.now();
    return new Error(this.label);
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
    const wheel = new TimerWheel(() => now);
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
