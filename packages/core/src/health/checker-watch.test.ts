import { describe, expect, it } from 'vitest';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { createManualClock } from '../time/manual-clock.js';
import { fixedRandom } from '../time/random.js';
import { createHealthChecker, type ProbeResultEvent } from './checker.js';
import type { Probe, ProbeWatch, ProbeWatchContext } from './probe.js';
import { createHealthRegistry } from './registry.js';

/** One open watch, as the test sees it: its context and a way to end it. */
interface OpenWatch {
  target: string;
  ctx: ProbeWatchContext;
  startedAt: number;
  end(outcome?: 'unsupported' | Error): void;
}

/**
 * A checker over a watching probe on a manual clock (1 s interval, 100 ms
 * timeout, restart jitter fixed at 0.5): `watches` lists every watch started;
 * `checks` counts calls of the polled probe.
 */
function setup(targets: Record<string, string> = { a: 'x' }) {
  const clock = createManualClock(0);
  const registry = createHealthRegistry({ failureThreshold: 2, openDurationMs: 10_000, clock });
  const watches: OpenWatch[] = [];
  let checks = 0;
  const watch: ProbeWatch<string> = (target, ctx) =>
    new Promise((resolve, reject) => {
      const end = (outcome?: 'unsupported' | Error) => {
        ctx.signal.removeEventListener('abort', onAbort);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const onAbort = () => end(ctx.signal.reason as Error);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      watches.push({ target, ctx, startedAt: clock(), end });
    });
  const probe: Probe<string> = Object.assign(
    async () => {
      checks += 1;
    },
    { watch },
  );
  const events: ProbeResultEvent[] = [];
  const checker = createHealthChecker<string>({
    registry,
    targets,
    probe,
    intervalMs: 1000,
    timeoutMs: 100,
    clock,
    sleep: clock.sleep,
    random: fixedRandom(0.5),
  });
  checker.onProbeResult((e) => events.push(e));
  return { clock, registry, watches, events, checker, checks: () => checks };
}

describe('createHealthChecker with a watching probe', () => {
  it('keeps one watch per target instead of polling, recording every reported status', async () => {
    const { clock, registry, watches, events, checker, checks } = setup({ a: 'x', b: 'y' });
    await clock.flush();
    expect(watches.map((w) => w.target)).toEqual(['x', 'y']);
    await clock.advanceAsync(20);
    watches[0]?.ctx.report(true, 'SERVING');
    watches[1]?.ctx.report(false, 'NOT_SERVING');
    await clock.advanceAsync(5000);
    watches[1]?.ctx.report(true);
    expect(events).toEqual([
      { provider: 'a', healthy: true, reason: 'SERVING', durationMs: 20, reported: true },
      { provider: 'b', healthy: false, reason: 'NOT_SERVING', durationMs: 20, reported: true },
      { provider: 'b', healthy: true, reason: 'ok', durationMs: 0, reported: true },
    ]);
    // The first report is a round trip; a later, pushed one carries no latency.
    expect(registry.snapshot()).toMatchObject({
      a: { ok: 1, fail: 0, latency: 20 },
      b: { ok: 1, fail: 1, latency: undefined },
    });
    // Several intervals passed: nothing polled, no watch restarted.
    expect(checks()).toBe(0);
    expect(watches).toHaveLength(2);
    checker.stop();
    expect(watches.every((w) => w.ctx.signal.aborted)).toBe(true);
    await clock.flush();
    expect(clock.pending).toBe(0);
    // A report after stop() records nothing.
    watches[0]?.ctx.report(false);
    expect(events).toHaveLength(3);
  });

  it('records a failed watch as a failure and restarts it on an exponential backoff capped at intervalMs', async () => {
    const { clock, registry, watches, events, checker } = setup();
    await clock.flush();
    const restartTimes: number[] = [];
    for (let i = 0; i < 6; i++) {
      watches.at(-1)?.ctx.report(true);
      watches.at(-1)?.end(new Error('connection refused'));
      await clock.flush();
      const before = watches.length;
      while (watches.length === before) await clock.advanceAsync(10);
      restartTimes.push((watches.at(-1) as OpenWatch).startedAt);
    }
    // Full jitter at 0.5 of 200, 400, 800, 1000 (the cap), 1000, 1000 ms.
    const gaps = restartTimes.map((t, i) => t - (i === 0 ? 0 : (restartTimes[i - 1] as number)));
    expect(gaps).toEqual([100, 200, 400, 500, 500, 500]);
    expect(events.filter((e) => !e.healthy).map((e) => e.reason)).toEqual(
      Array(6).fill('connection refused'),
    );
    expect(registry.snapshot().a).toMatchObject({ ok: 6, fail: 6 });
    checker.stop();
    await clock.flush();
    expect(clock.pending).toBe(0);
  });

  it('starts the restart schedule over after a watch that held for an interval', async () => {
    const { clock, watches, checker } = setup();
    await clock.flush();
    for (let i = 0; i < 3; i++) {
      watches.at(-1)?.ctx.report(true);
      watches.at(-1)?.end();
      const before = watches.length;
      while (watches.length === before) await clock.advanceAsync(10);
    }
    expect(watches.at(-1)?.startedAt).toBe(100 + 200 + 400);
    watches.at(-1)?.ctx.report(true);
    await clock.advanceAsync(1000);
    const endedAt = clock();
    watches.at(-1)?.end();
    const before = watches.length;
    while (watches.length === before) await clock.advanceAsync(10);
    expect(watches.at(-1)?.startedAt).toBe(endedAt + 100);
    checker.stop();
  });

  it('cuts and records a watch that reports nothing within timeoutMs, then restarts it', async () => {
    const { clock, registry, watches, events, checker } = setup();
    await clock.flush();
    await clock.advanceAsync(100);
    const first = watches[0] as OpenWatch;
    expect(first.ctx.signal.aborted).toBe(true);
    expect(isDeadlineExceededError(first.ctx.signal.reason)).toBe(true);
    expect(events).toEqual([
      {
        provider: 'a',
        healthy: false,
        reason: 'watch reported nothing within 100 ms',
        durationMs: 100,
        reported: false,
      },
    ]);
    // A report from the cut watch is ignored.
    first.ctx.report(true);
    expect(registry.snapshot().a).toMatchObject({ ok: 0, fail: 1 });
    await clock.advanceAsync(100);
    expect(watches).toHaveLength(2);
    // A watch that reported in time is never cut.
    watches[1]?.ctx.report(true);
    await clock.advanceAsync(5000);
    expect(watches[1]?.ctx.signal.aborted).toBe(false);
    checker.stop();
    await clock.flush();
    expect(clock.pending).toBe(0);
  });

  it("polls a target whose watch resolves 'unsupported', at once and every interval", async () => {
    const { clock, registry, watches, checker, checks } = setup({ a: 'x', b: 'y' });
    await clock.flush();
    watches[0]?.end('unsupported');
    watches[1]?.ctx.report(true);
    await clock.flush();
    expect(checks()).toBe(1);
    await clock.advanceAsync(3000);
    expect(checks()).toBe(4);
    expect(registry.snapshot().a?.ok).toBe(4);
    // b stays watched; a is never watched again.
    expect(watches).toHaveLength(2);
    checker.stop();
    await clock.flush();
    expect(clock.pending).toBe(0);
  });

  it('stop() during a restart backoff clears its wait and starts no watch', async () => {
    const { clock, watches, checker } = setup();
    await clock.flush();
    watches[0]?.end(new Error('reset'));
    await clock.flush();
    expect(clock.pending).toBeGreaterThan(0);
    checker.stop();
    await clock.flush();
    expect(clock.pending).toBe(0);
    await clock.advanceAsync(5000);
    expect(watches).toHaveLength(1);
  });

  it('records a watch that throws synchronously as a failure and validates probe.watch', async () => {
    const clock = createManualClock(0);
    const registry = createHealthRegistry({ clock });
    const base = { registry, targets: { a: 'x' }, intervalMs: 1000, timeoutMs: 100, clock };
    expect(() =>
      createHealthChecker({ ...base, probe: Object.assign(async () => {}, { watch: 1 as never }) }),
    ).toThrow(/probe\.watch must be a function/);
    const checker = createHealthChecker({
      ...base,
      sleep: clock.sleep,
      probe: Object.assign(async () => {}, {
        watch: (() => {
          throw new Error('bad target');
        }) as ProbeWatch<string>,
      }),
    });
    await clock.flush();
    expect(registry.snapshot().a).toMatchObject({ ok: 0, fail: 1 });
    checker.stop();
    await clock.flush();
    expect(clock.pending).toBe(0);
  });
});
