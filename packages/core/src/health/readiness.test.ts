import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { allOf, anyOf } from './combinators.js';
import { type Probe, runProbe } from './probe.js';
import {
  belowLimit,
  counterProgress,
  ratioBelow,
  sampleUnchanged,
  startupGrace,
} from './readiness.js';

/** A sample that returns the given values in turn (the last one repeats). */
const values = (...vs: number[]) => {
  let i = 0;
  return () => vs[Math.min(i++, vs.length - 1)] as number;
};

describe('counterProgress', () => {
  it('is healthy when the counter increased between samples taken interval apart', async () => {
    const clock = createManualClock();
    const times: number[] = [];
    const sample = () => {
      times.push(clock());
      return times.length === 1 ? 3 : 7;
    };
    const rule = counterProgress({ sample, intervalMs: 50, sleep: clock.sleep, name: 'delivered' });
    await expect(clock.run(rule())).resolves.toEqual({
      healthy: true,
      reason: 'delivered moved from 3 to 7 in 50 ms',
    });
    expect(times).toEqual([0, 50]);
  });

  it('is healthy while the counter has never moved from its initial value', async () => {
    const clock = createManualClock();
    const rule = counterProgress({ sample: values(0, 0), intervalMs: 1000, sleep: clock.sleep });
    await expect(clock.run(rule())).resolves.toEqual({
      healthy: true,
      reason: 'counter has not moved from 0 yet',
    });
  });

  it('is unhealthy when a counter that moved before is stuck', async () => {
    const clock = createManualClock();
    const rule = counterProgress({ sample: values(9, 9), intervalMs: 50, sleep: clock.sleep });
    await expect(clock.run(rule())).resolves.toEqual({
      healthy: false,
      reason: 'counter made no progress in 50 ms (stuck at 9)',
    });
  });

  it('rejects with the abort reason when cut during the wait', async () => {
    const clock = createManualClock();
    const ac = new AbortController();
    const rule = counterProgress({ sample: values(1, 2), intervalMs: 50, sleep: clock.sleep });
    const pending = rule(undefined, { signal: ac.signal });
    const reason = new Error('cut');
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
  });
});

describe('sampleUnchanged', () => {
  it('is healthy when both samples agree, unhealthy with the change otherwise', async () => {
    const clock = createManualClock();
    const drops = (...vs: number[]) =>
      sampleUnchanged({
        sample: values(...vs),
        intervalMs: 100,
        sleep: clock.sleep,
        name: 'drops',
      });
    await expect(clock.run(drops(2, 2)())).resolves.toEqual({
      healthy: true,
      reason: 'drops stayed at 2 for 100 ms',
    });
    await expect(clock.run(drops(2, 3)())).resolves.toEqual({
      healthy: false,
      reason: 'drops changed from 2 to 3 in 100 ms',
    });
  });
});

describe('belowLimit', () => {
  it('is healthy strictly below the limit', async () => {
    const rule = belowLimit({ sample: values(4, 5), limit: 5, name: 'retries' });
    await expect(rule()).resolves.toEqual({ healthy: true, reason: 'retries is 4, below 5' });
    await expect(rule()).resolves.toEqual({ healthy: false, reason: 'retries is 5, not below 5' });
  });

  it('turns a sample that throws into an unhealthy reason', async () => {
    const rule = belowLimit({
      sample: () => {
        throw new Error('no such metric');
      },
      limit: 1,
      name: 'depth',
    });
    await expect(rule()).resolves.toEqual({
      healthy: false,
      reason: 'depth could not be read: no such metric',
    });
  });

  it('hands the probe target to the sample', async () => {
    const depth: Record<string, number> = { a: 1, b: 9 };
    const rule = belowLimit<string>({ sample: (t) => depth[t as string] as number, limit: 5 });
    const probe: Probe<string> = rule;
    const signal = new AbortController().signal;
    expect((await runProbe(probe, 'a', { provider: 'a', signal })).healthy).toBe(true);
    expect((await runProbe(probe, 'b', { provider: 'b', signal })).healthy).toBe(false);
  });
});

describe('ratioBelow', () => {
  it('compares the ratio with the limit', async () => {
    const ok = ratioBelow({
      numerator: () => 2,
      denominator: () => 100,
      limit: 0.05,
      name: 'drop rate',
    });
    await expect(ok()).resolves.toEqual({
      healthy: true,
      reason: 'drop rate is 0.02 (2/100), below 0.05',
    });
    const bad = ratioBelow({ numerator: () => 10, denominator: () => 100, limit: 0.05 });
    await expect(bad()).resolves.toEqual({
      healthy: false,
      reason: 'ratio is 0.1 (10/100), not below 0.05',
    });
  });

  it('treats a zero denominator as 1', async () => {
    const rule = ratioBelow({ numerator: values(0, 1), denominator: () => 0, limit: 0.5 });
    await expect(rule()).resolves.toMatchObject({
      healthy: true,
      reason: expect.stringMatching(/is 0 \(0\/0\)/),
    });
    await expect(rule()).resolves.toMatchObject({
      healthy: false,
      reason: expect.stringMatching(/is 1 \(1\/0\)/),
    });
  });
});

describe('startupGrace', () => {
  it('is healthy during the grace period, then the rule (or the end of grace) decides', async () => {
    const clock = createManualClock(1000);
    const grace = startupGrace({ graceMs: 60_000, clock });
    const guarded = startupGrace({
      graceMs: 60_000,
      clock,
      rule: belowLimit({ sample: () => 9, limit: 5 }),
    });
    await expect(grace()).resolves.toEqual({
      healthy: true,
      reason: 'in start-up grace period (60000 ms left)',
    });
    await expect(guarded()).resolves.toMatchObject({ healthy: true });
    clock.advance(60_000);
    await expect(grace()).resolves.toEqual({
      healthy: false,
      reason: 'start-up grace period of 60000 ms is over',
    });
    await expect(guarded()).resolves.toEqual({ healthy: false, reason: 'value is 9, not below 5' });
  });

  it('counts from startedAt when given', async () => {
    const clock = createManualClock(100_000);
    const rule = startupGrace({ graceMs: 1000, startedAt: 99_500, clock });
    await expect(rule()).resolves.toMatchObject({
      healthy: true,
      reason: expect.stringMatching(/500 ms left/),
    });
  });
});

describe('all / any', () => {
  const up = belowLimit({ sample: () => 1, limit: 2, name: 'up' });
  const down = belowLimit({ sample: () => 3, limit: 2, name: 'down' });
  const down2 = belowLimit({ sample: () => 4, limit: 2, name: 'down2' });

  it('all is healthy only when every rule is; the reason names the failing ones', async () => {
    await expect(allOf(up, up)()).resolves.toEqual({
      healthy: true,
      reason: 'up is 1, below 2; up is 1, below 2',
    });
    await expect(allOf(up, down, down2)()).resolves.toEqual({
      healthy: false,
      reason: 'down is 3, not below 2; down2 is 4, not below 2',
    });
  });

  it('any is healthy when one rule is; otherwise it lists every reason', async () => {
    await expect(anyOf(down, up)()).resolves.toEqual({ healthy: true, reason: 'up is 1, below 2' });
    await expect(anyOf(down, down2)()).resolves.toEqual({
      healthy: false,
      reason: 'down is 3, not below 2; down2 is 4, not below 2',
    });
  });

  it('nests, and a rule that rejects counts as unhealthy', async () => {
    const broken = () => Promise.reject(new Error('boom'));
    await expect(anyOf(allOf(up, broken), up)()).resolves.toMatchObject({ healthy: true });
    await expect(allOf(up, broken)()).resolves.toEqual({ healthy: false, reason: 'boom' });
  });

  it('needs at least one rule, each a function', () => {
    expect(() => allOf()).toThrow(/allOf\(\.\.\.rules\) needs at least one rule/);
    expect(() => anyOf(up, 5 as never)).toThrow(/anyOf\(\.\.\.rules\) rule 1 must be a function/);
  });
});

describe('rule options are validated, naming the option', () => {
  it('throws for missing samples and bad limits or intervals', () => {
    expect(() => counterProgress({} as never)).toThrow(
      /counterProgress: sample must be a function/,
    );
    expect(() => sampleUnchanged({ sample: () => 1, intervalMs: 'soon' as never })).toThrow(
      /sampleUnchanged: interval/,
    );
    expect(() => belowLimit({ sample: () => 1, limit: Number.NaN })).toThrow(/belowLimit: limit/);
    expect(() => ratioBelow({ numerator: () => 1, denominator: 2 as never, limit: 1 })).toThrow(
      /ratioBelow: denominator/,
    );
    expect(() => startupGrace({ graceMs: -1 })).toThrow(/startupGrace: graceMs/);
  });
});
