import { describe, expect, it } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { createManualClock } from '../time/manual-clock.js';
import {
  createHealthChecker,
  type HealthCheckerOptions,
  type ProbeResultEvent,
} from './checker.js';
import type { Probe } from './probe.js';
import { createHealthRegistry } from './registry.js';

/** A registry and a checker factory on one manual clock; defaults: target a, 1 s interval, 100 ms timeout. */
function setup() {
  const clock = createManualClock(0);
  const registry = createHealthRegistry({ failureThreshold: 2, openDurationMs: 10_000, clock });
  const start = (options: Partial<HealthCheckerOptions<string>>) =>
    createHealthChecker<string>({
      registry,
      targets: { a: 'x' },
      probe: async () => {},
      intervalMs: 1000,
      timeoutMs: 100,
      clock,
      sleep: clock.sleep,
      ...options,
    });
  return { clock, registry, start };
}

describe('createHealthChecker', () => {
  it('probes at once and every interval, recording outcomes with latency', async () => {
    const { clock, registry, start } = setup();
    const calls: string[] = [];
    const probe: Probe<string> = async (target, { provider, signal }) => {
      calls.push(`${provider}@${clock()}`);
      await clock.sleep(target === 'slow' ? 40 : 10, signal);
      if (target === 'down') throw new Error('refused');
    };
    const events: ProbeResultEvent[] = [];
    const checker = start({
      targets: { a: 'fast', b: 'slow', c: 'down' },
      probe,
      timeoutMs: 500,
    });
    checker.onProbeResult((e) => events.push(e));
    await clock.advanceAsync(50);
    expect(calls).toEqual(['a@0', 'b@0', 'c@0']);
    expect(registry.snapshot()).toMatchObject({
      a: { ok: 1, fail: 0, latency: 10 },
      b: { ok: 1, fail: 0, latency: 40 },
      c: { ok: 0, fail: 1, streak: 1 },
    });
    expect(events).toContainEqual({
      provider: 'c',
      healthy: false,
      reason: 'refused',
      durationMs: 10,
      reported: false,
    });
    expect(events).toContainEqual({
      provider: 'b',
      healthy: true,
      reason: 'ok',
      durationMs: 40,
      reported: false,
    });
    await clock.advanceAsync(950);
    expect(calls.slice(3)).toEqual(['a@1000', 'b@1000', 'c@1000']);
    await clock.advanceAsync(50);
    expect(registry.isOpen('c')).toBe(true);
    expect(registry.snapshot().a?.ok).toBe(2);
    checker.stop();
    expect(clock.pending).toBe(0);
  });

  it('records a probe that exceeds timeoutMs as a failure and aborts it', async () => {
    const { clock, registry, start } = setup();
    let reason: unknown;
    const probe: Probe<string> = async (_t, { signal }) => {
      await clock.sleep(5000, signal);
      reason = signal.reason;
    };
    const events: ProbeResultEvent[] = [];
    const checker = start({
      probe,
    });
    checker.onProbeResult((e) => events.push(e));
    await clock.advanceAsync(100);
    expect(events).toEqual([
      {
        provider: 'a',
        healthy: false,
        reason: 'probe timed out after 100 ms',
        durationMs: 100,
        reported: false,
      },
    ]);
    expect(isDeadlineExceededError(reason)).toBe(true);
    expect(registry.snapshot().a).toMatchObject({ ok: 0, fail: 1 });
    checker.stop();
    expect(clock.pending).toBe(0);
  });

  it('stop() aborts probes in flight, records nothing and leaves no timers', async () => {
    const { clock, registry, start } = setup();
    let started = 0;
    let aborted = 0;
    const probe: Probe<string> = async (_t, { signal }) => {
      started += 1;
      await clock.sleep(50, signal);
      if (signal.aborted) aborted += 1;
    };
    const checker = start({
      targets: [
        { name: 'a', target: 'x' },
        { name: 'b', target: 'y' },
      ],
      probe,
      timeoutMs: 500,
    });
    await clock.advanceAsync(10);
    expect(started).toBe(2);
    checker.stop();
    expect(clock.pending).toBe(0);
    expect(checker.running).toBe(false);
    await clock.advanceAsync(10_000);
    expect(aborted).toBe(2);
    expect(started).toBe(2);
    expect(registry.snapshot()).toEqual({});
    await expect(checker.checkNow()).resolves.toEqual([]);
  });

  it('stop() between rounds clears the interval wait', async () => {
    const { clock, registry, start } = setup();
    const checker = start({});
    await clock.flush();
    expect(registry.snapshot().a?.ok).toBe(1);
    expect(clock.pending).toBe(1);
    checker.stop();
    expect(clock.pending).toBe(0);
  });

  it('checkNow runs an immediate round and joins probes already in flight', async () => {
    const { clock, registry, start } = setup();
    let calls = 0;
    const checker = start({
      probe: async (_t, { signal }) => {
        calls += 1;
        await clock.sleep(20, signal);
        return { healthy: false, reason: 'degraded' };
      },
      intervalMs: 60_000,
    });
    const joined = checker.checkNow();
    await clock.advanceAsync(20);
    await expect(joined).resolves.toEqual([
      { provider: 'a', healthy: false, reason: 'degraded', durationMs: 20, reported: false },
    ]);
    expect(calls).toBe(1);
    const fresh = checker.checkNow();
    await clock.advanceAsync(20);
    await expect(fresh).resolves.toHaveLength(1);
    expect(calls).toBe(2);
    expect(registry.snapshot().a).toMatchObject({ fail: 2, streak: 2 });
    checker.stop();
    expect(clock.pending).toBe(0);
  });

  it('keepStreak records passing probes without resetting the streak', async () => {
    const { clock, registry, start } = setup();
    registry.failure('a');
    registry.failure('a');
    const checker = start({
      keepStreak: true,
    });
    await clock.flush();
    expect(registry.snapshot().a).toMatchObject({ ok: 1, streak: 2, healthy: false });
    checker.stop();
  });

  it("'none' checks and records nothing and starts no timer", async () => {
    const { clock, registry, start } = setup();
    const checker = start({
      probe: 'none',
    });
    await expect(checker.checkNow()).resolves.toEqual([]);
    expect(clock.pending).toBe(0);
    expect(checker.running).toBe(false);
    expect(registry.snapshot()).toEqual({});
  });

  it('waits on an unref’d host timer by default, and stop() ends the loop', async () => {
    const registry = createHealthRegistry();
    const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = refTimers();
    let calls = 0;
    const checker = createHealthChecker({
      registry,
      targets: { a: 'x' },
      probe: async () => {
        calls += 1;
      },
      intervalMs: 20,
      timeoutMs: 1000,
    });
    // The probe's timeout timer is running now; it must not keep the process alive.
    expect(refTimers()).toBe(before);
    // Microtasks only (no host timer can fire or start meanwhile): the loop reaches its interval wait.
    for (let i = 0; i < 30; i++) await Promise.resolve();
    expect(registry.snapshot().a?.ok).toBe(1);
    expect(refTimers()).toBe(before);
    await expect.poll(() => calls).toBeGreaterThanOrEqual(2);
    checker.stop();
    const stoppedAt = calls;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(calls).toBe(stoppedAt);
    expect(registry.snapshot().a?.ok).toBe(stoppedAt);
  });

  it('validates its options, naming them', () => {
    const registry = createHealthRegistry();
    const base = {
      registry,
      targets: { a: 'x' },
      probe: async () => {},
      intervalMs: 10,
      timeoutMs: 10,
    };
    expect(() => createHealthChecker({ ...base, intervalMs: 0 })).toThrow(/intervalMs must be > 0/);
    expect(() => createHealthChecker({ ...base, timeoutMs: Number.NaN })).toThrow(/timeoutMs/);
    expect(() => createHealthChecker({ ...base, probe: 'http' as never })).toThrow(
      /probe must be a function/,
    );
    expect(() => createHealthChecker({ ...base, registry: {} as never })).toThrow(
      /registry.success/,
    );
    expect(() => createHealthChecker({ ...base, targets: { '': 'x' } })).toThrow(
      /non-empty string/,
    );
    expect(() =>
      createHealthChecker({
        ...base,
        targets: [
          { name: 'a', target: 'x' },
          { name: 'a', target: 'y' },
        ],
      }),
    ).toThrow(/duplicate name "a"/);
  });
});
