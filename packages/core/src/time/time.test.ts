import { describe, expect, it } from 'vitest';
import { systemClock } from './clock.js';
import { createManualClock } from './manual-clock.js';
import { fixedRandom, sequenceRandom, systemRandom } from './random.js';
import { systemSleep } from './sleep.js';

describe('clock and random', () => {
  it('systemClock reads wall time', () => {
    const t = systemClock();
    expect(Math.abs(t - Date.now())).toBeLessThan(1000);
  });

  it('systemRandom stays in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const r = systemRandom();
      expect(r).toBeGreaterThanOrEqual(0);
      expect(r).toBeLessThan(1);
    }
  });

  it('fixedRandom and sequenceRandom', () => {
    expect(fixedRandom(0.25)()).toBe(0.25);
    const r = sequenceRandom([0.1, 0.9]);
    expect([r(), r(), r()]).toEqual([0.1, 0.9, 0.1]);
    expect(() => fixedRandom(1)).toThrow(RangeError);
    expect(() => sequenceRandom([])).toThrow(/non-empty/);
    expect(() => sequenceRandom([0.5, -1])).toThrow(/\[1\]/);
  });
});

describe('systemSleep', () => {
  it('resolves after the delay', async () => {
    const start = performance.now();
    await systemSleep(20);
    expect(performance.now() - start).toBeGreaterThanOrEqual(15);
  });

  it('resolves early on abort and never rejects', async () => {
    const ac = new AbortController();
    const start = performance.now();
    const p = systemSleep(10_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).resolves.toBeUndefined();
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('resolves at once for an aborted signal', async () => {
    await expect(systemSleep(10_000, AbortSignal.abort())).resolves.toBeUndefined();
  });
});

describe('createManualClock', () => {
  it('is a callable clock that advances', () => {
    const clock = createManualClock(100);
    expect(clock()).toBe(100);
    clock.advance(50);
    expect(clock()).toBe(150);
    expect(clock.now).toBe(150);
  });

  it('fires virtual sleeps in order when advanced', async () => {
    const clock = createManualClock();
    const fired: number[] = [];
    void clock.sleep(30).then(() => fired.push(30));
    void clock.sleep(10).then(() => fired.push(10));
    expect(clock.pending).toBe(2);
    clock.advance(9);
    await clock.flush();
    expect(fired).toEqual([]);
    clock.advance(25);
    await clock.flush();
    expect(fired).toEqual([10, 30]);
    expect(clock.pending).toBe(0);
  });

  it('resolves a sleep early on abort and removes it', async () => {
    const clock = createManualClock();
    const ac = new AbortController();
    const p = clock.sleep(1000, ac.signal);
    ac.abort();
    await p;
    expect(clock.pending).toBe(0);
    expect(clock()).toBe(0);
  });

  it('advanceAsync fires sleeps registered by continuations', async () => {
    const clock = createManualClock();
    const seen: number[] = [];
    void (async () => {
      await clock.sleep(10);
      seen.push(clock());
      await clock.sleep(10);
      seen.push(clock());
    })();
    await clock.advanceAsync(25);
    expect(seen).toEqual([10, 20]);
    expect(clock()).toBe(25);
  });

  it('run drives a chain of sleeps to completion', async () => {
    const clock = createManualClock();
    const chain = async () => {
      for (let i = 0; i < 5; i++) await clock.sleep(1000);
      return clock();
    };
    await expect(clock.run(chain())).resolves.toBe(5000);
  });

  it('run reports a promise that can never settle', async () => {
    const clock = createManualClock();
    await expect(clock.run(new Promise(() => {}))).rejects.toThrow(/no sleep is pending/);
  });
});
