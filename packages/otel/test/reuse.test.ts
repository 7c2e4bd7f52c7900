import { createManualClock, protect } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../src/index.js';
import { otelSdk } from './sdk.js';

class FlakyError extends Error {
  override name = 'FlakyError';
}

describe('otelTelemetry on protect’s success path', () => {
  it('a call that succeeds first time reads the clock twice, and its durations come from those reads', async () => {
    const clock = createManualClock();
    let reads = 0;
    const sdk = otelSdk({
      clock: () => {
        reads++;
        return clock();
      },
    });
    const run = protect({ name: 'users', retry: { attempts: 3 }, telemetry: sdk.telemetry });
    for (let i = 0; i < 3; i++) {
      await run(async () => {
        clock.advance(7);
        return i;
      });
    }
    expect(reads).toBe(6);
    const users = { 'breakwater.name': 'users' };
    const attempt = await sdk.histogram(METRICS.attemptDuration, users);
    const call = await sdk.histogram(METRICS.callDuration, users);
    expect(attempt.count).toBe(3);
    expect(call.count).toBe(3);
    expect(attempt.sum).toBeCloseTo(0.021, 9);
    expect(call.sum).toBeCloseTo(0.021, 9);
    // One-attempt calls are the call.duration count less this histogram's: nothing recorded.
    expect(await sdk.histogram(METRICS.callAttempts, users)).toEqual({ count: 0, sum: 0 });
    expect(await sdk.sum(METRICS.attempts, { ...users, 'breakwater.outcome': 'success' })).toBe(3);
  });

  it('a reused call object reports to its own call’s span, not to the one before', async () => {
    const sdk = otelSdk();
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 1, jitter: 'none' } },
      telemetry: sdk.telemetry,
    });
    // The first call succeeds at once, so the second runs on its call object (and telemetry).
    await sdk.inCallerSpan(() => run(async () => 'first'));
    let n = 0;
    await sdk.tracer.startActiveSpan('second', async (span) => {
      try {
        await run(async () => {
          if (++n === 1) throw new FlakyError('x');
          return 'second';
        });
      } finally {
        span.end();
      }
    });
    const events = (name: string) =>
      sdk
        .spans()
        .find((s) => s.name === name)
        ?.events.map((e) => e.name);
    expect(events('caller')).toEqual([]);
    expect(events('second')).toEqual(['breakwater.retry']);
    expect(await sdk.histogram(METRICS.callAttempts)).toEqual({ count: 1, sum: 2 });
  });

  it('a queued call’s first attempt is timed from when it left the queue; the call from its start', async () => {
    const clock = createManualClock();
    const sdk = otelSdk({ clock });
    const run = protect({
      name: 'q',
      concurrency: { limit: 1, maxQueue: 1 },
      telemetry: sdk.telemetry,
    });
    let release = () => {};
    const holding = run(
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    const queued = run(async () => {
      clock.advance(10);
      return 'queued';
    });
    clock.advance(100);
    release();
    await holding;
    expect(await queued).toBe('queued');
    const q = { 'breakwater.name': 'q' };
    expect(await sdk.histogram(METRICS.attemptDuration, q)).toEqual({ count: 2, sum: 0.11 });
    // The holding call: 100 ms; the queued one: 110 ms, of which its attempt took 10.
    const call = await sdk.histogram(METRICS.callDuration, q);
    expect(call.count).toBe(2);
    expect(call.sum).toBeCloseTo(0.21, 9);
  });
});
