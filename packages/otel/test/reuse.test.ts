import { type CallTelemetry, protect } from '@breakwater/core';
import { createManualClock, type ManualClock } from '@breakwater/core/time';
import { type Histogram, type Meter, type MeterProvider, metrics, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { METRICS, otelTelemetry } from '../src/index.js';
import { otelSdk } from './sdk.js';

class FlakyError extends Error {
  override name = 'FlakyError';
}

/**
 * On a stack with a bulkhead of one: a call holds the slot for 100 ms while a second waits, then
 * runs for 10 ms (`beforeRelease` runs just before the slot is given back).
 */
async function holdThenQueue(
  run: (fn: () => Promise<string>) => Promise<string>,
  clock: ManualClock,
  beforeRelease: () => void = () => {},
): Promise<void> {
  let release = () => {};
  const holding = run(
    () =>
      new Promise<string>((r) => {
        release = () => r('held');
      }),
  );
  const queued = run(async () => {
    clock.advance(10);
    return 'queued';
  });
  clock.advance(100);
  beforeRelease();
  release();
  expect(await holding).toBe('held');
  expect(await queued).toBe('queued');
}

describe('otelTelemetry on protect’s success path', () => {
  it('a timed call that succeeds first time reads the stack’s clock twice, its start shared with the deadline, and its durations come from those reads', async () => {
    const clock = createManualClock();
    let reads = 0;
    const counted = () => {
      reads++;
      return clock();
    };
    const sdk = otelSdk();
    const run = protect({
      name: 'users',
      retry: { attempts: 3 },
      attemptTimeoutMs: 1_000,
      clock: counted,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    for (let i = 0; i < 3; i++) {
      await run(async () => {
        clock.advance(7);
        return i;
      });
    }
    // Per call: the start (telemetry's and the attempt deadline's) and the end (the attempt's and the call's).
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

  it('a call that succeeds first time never looks its caller’s span up; a retried one tells that span', async () => {
    const sdk = otelSdk();
    const getSpan = vi.spyOn(trace, 'getSpan');
    try {
      const run = protect({
        retry: { attempts: 2, backoff: { baseDelayMs: 1, jitter: 'none' } },
        telemetry: sdk.telemetry,
      });
      await sdk.inCallerSpan(() => run(async () => 'ok'));
      expect(getSpan).not.toHaveBeenCalled();
      let n = 0;
      await sdk.inCallerSpan(() =>
        run(async () => {
          if (++n === 1) throw new FlakyError('x');
          return 'ok';
        }),
      );
      expect(getSpan).toHaveBeenCalled();
    } finally {
      getSpan.mockRestore();
    }
    const callers = sdk.spans().filter((s) => s.name === 'caller');
    expect(callers.map((s) => s.events.map((e) => e.name))).toEqual([[], ['breakwater.retry']]);
  });

  it('events of a retry told from the shared deadline timer go to each call’s own caller span', async () => {
    const sdk = otelSdk();
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 0, jitter: 'none' } },
      attemptTimeoutMs: 20,
      telemetry: sdk.telemetry,
    });
    const tries = new Map<string, number>();
    const call = (name: string) =>
      sdk.tracer.startActiveSpan(name, async (span) => {
        try {
          // The first attempt of each call outlives its deadline; both deadlines share the wheel's timer.
          return await run(({ signal }) => {
            const n = (tries.get(name) ?? 0) + 1;
            tries.set(name, n);
            if (n === 2) return Promise.resolve(name);
            return new Promise<string>((_, reject) =>
              signal.addEventListener('abort', () => reject(signal.reason)),
            );
          });
        } finally {
          span.end();
        }
      });
    expect(await Promise.all([call('a'), call('b')])).toEqual(['a', 'b']);
    const events = (name: string) =>
      sdk
        .spans()
        .find((s) => s.name === name)
        ?.events.map((e) => e.name);
    expect(events('a')).toEqual(['breakwater.deadline_exceeded', 'breakwater.retry']);
    expect(events('b')).toEqual(['breakwater.deadline_exceeded', 'breakwater.retry']);
  });

  it('each call reports to its own caller’s span, not to the one of the call before', async () => {
    const sdk = otelSdk();
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 1, jitter: 'none' } },
      telemetry: sdk.telemetry,
    });
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
    const sdk = otelSdk();
    const run = protect({
      name: 'q',
      concurrency: { limit: 1, maxQueue: 1 },
      clock,
      telemetry: sdk.telemetry,
    });
    await holdThenQueue(run, clock);
    const q = { 'breakwater.name': 'q' };
    expect(await sdk.histogram(METRICS.attemptDuration, q)).toEqual({ count: 2, sum: 0.11 });
    // The holding call: 100 ms; the queued one: 110 ms, of which its attempt took 10.
    const call = await sdk.histogram(METRICS.callDuration, q);
    expect(call.count).toBe(2);
    expect(call.sum).toBeCloseTo(0.21, 9);
  });

  it('without attempt spans, attempt 1’s start is the call’s unless it queued; with them, every start is told and a queued call’s span 1 opens when it leaves the queue', async () => {
    expect(otelSdk().telemetry.firstAttemptAtStart).toBe(true);
    const sdk = otelSdk({ attemptSpans: true });
    expect(sdk.telemetry.firstAttemptAtStart).toBe(false);
    const clock = createManualClock();
    const run = protect({
      name: 'q',
      concurrency: { limit: 1, maxQueue: 1 },
      clock,
      telemetry: sdk.telemetry,
    });
    await holdThenQueue(run, clock, () => {
      // The SDK stamps spans with the host's clock: let it move past the queued call's start.
      const waitFrom = performance.now();
      while (performance.now() - waitFrom < 3) {
        // Busy: no timer, the order of the stamps is all that is asserted.
      }
    });
    const spans = sdk.spans().filter((s) => s.name === 'breakwater.attempt');
    expect(spans.map((s) => s.attributes['breakwater.outcome'])).toEqual(['success', 'success']);
    const [first, second] = spans as [ReadableSpan, ReadableSpan];
    const nanos = ([sec, ns]: [number, number]) => BigInt(sec) * 1_000_000_000n + BigInt(ns);
    // The queued call's attempt span opened once the slot was free, not when the call started
    // (3 ms of host time earlier). The SDK may stamp a start to the whole millisecond, so the
    // two stamps, taken in the same tick, are compared to 1 ms.
    expect(nanos(second.startTime)).toBeGreaterThan(nanos(first.endTime) - 1_000_000n);
    const q = { 'breakwater.name': 'q' };
    expect(await sdk.histogram(METRICS.attemptDuration, q)).toEqual({ count: 2, sum: 0.11 });
  });

  it('firstAttemptSucceeded records one duration for the attempt and the call when attempt 1 started with it; attemptEnd records at once', () => {
    // What the meter hears, in order: the API's no-op meter, its histograms spied on.
    const records: Array<[string, number]> = [];
    const noop = metrics.getMeterProvider().getMeter('noop');
    const meter: Meter = Object.create(noop);
    meter.createHistogram = (name) =>
      ({ record: (value: number) => records.push([name, value]) }) as Histogram;
    const meterProvider: MeterProvider = { getMeter: () => meter };
    const telemetry = otelTelemetry({ meterProvider, spanEvents: false });
    const target = { name: 't' };
    const start = (now: number) => telemetry.startCall(target, now) as Required<CallTelemetry>;

    const fused = start(0);
    fused.attemptStart(1, 0);
    fused.firstAttemptSucceeded(5);
    expect(records).toEqual([
      [METRICS.attemptDuration, 0.005],
      [METRICS.callDuration, 0.005],
    ]);

    // A call that queued: its attempt started after the call, so the two durations differ.
    records.length = 0;
    const queued = start(10);
    queued.attemptStart(1, 14);
    queued.firstAttemptSucceeded(18);
    expect(records).toEqual([
      [METRICS.attemptDuration, (18 - 14) / 1_000],
      [METRICS.callDuration, (18 - 10) / 1_000],
    ]);

    // No attempt start told: attempt 1 started with the call (what drivers tell without attempt
    // spans, see firstAttemptAtStart), so both durations are the call's.
    records.length = 0;
    start(20).firstAttemptSucceeded(23);
    expect(records).toEqual([
      [METRICS.attemptDuration, 0.003],
      [METRICS.callDuration, 0.003],
    ]);
    records.length = 0;
    const implied = start(24);
    implied.attemptEnd(1, 'failure', 'FlakyError', 26);
    expect(records).toEqual([[METRICS.attemptDuration, 0.002]]);

    // The separate hooks record each end when told, with the same figures.
    records.length = 0;
    const separate = start(30);
    separate.attemptStart(1, 30);
    separate.attemptEnd(1, 'success', undefined, 35);
    expect(records).toEqual([[METRICS.attemptDuration, 0.005]]);
    separate.end('success', 1, undefined, 35);
    expect(records).toEqual([
      [METRICS.attemptDuration, 0.005],
      [METRICS.callDuration, 0.005],
    ]);

    // A failed attempt, then a retry that succeeded: each attempt at its end, then the call.
    records.length = 0;
    const retried = start(40);
    retried.attemptStart(1, 40);
    retried.attemptEnd(1, 'failure', 'FlakyError', 41);
    expect(records).toEqual([[METRICS.attemptDuration, 0.001]]);
    retried.attemptStart(2, 45);
    retried.attemptEnd(2, 'success', undefined, 47);
    retried.end('success', 2, undefined, 47);
    expect(records.slice(1)).toEqual([
      [METRICS.attemptDuration, 0.002],
      [METRICS.callDuration, 0.007],
      [METRICS.callAttempts, 2],
    ]);
  });
});
