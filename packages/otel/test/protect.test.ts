import { protect } from '@breakwater/core';
import { createManualClock } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { METRICS, otelTelemetry } from '../src/index.js';
import { everyAttributeValue, otelSdk } from './sdk.js';

class FlakyError extends Error {
  override name = 'FlakyError';
}

const fixed = { baseDelayMs: 5, strategy: 'linear', jitter: 'none' } as const;

describe('otelTelemetry through protect', () => {
  it('a call retried twice gives the counters, histograms and span events of three attempts', async () => {
    const sdk = otelSdk();
    const run = protect({
      name: 'users',
      retry: { attempts: 3, backoff: fixed },
      telemetry: sdk.telemetry,
    });
    let n = 0;
    const value = await sdk.tracer.startActiveSpan('caller', async (span) => {
      try {
        return await run(async () => {
          n++;
          if (n < 3) throw new FlakyError('secret payload 42');
          return 'ok';
        });
      } finally {
        span.end();
      }
    });
    expect(value).toBe('ok');
    const users = { 'breakwater.name': 'users' };
    expect(
      await sdk.sum(METRICS.attempts, {
        ...users,
        'breakwater.outcome': 'failure',
        'error.type': 'FlakyError',
      }),
    ).toBe(2);
    expect(await sdk.sum(METRICS.attempts, { ...users, 'breakwater.outcome': 'success' })).toBe(1);
    expect(await sdk.sum(METRICS.retries, { ...users, 'error.type': 'FlakyError' })).toBe(2);
    expect(await sdk.histogram(METRICS.attemptDuration, users)).toMatchObject({ count: 3 });
    expect(
      await sdk.histogram(METRICS.callDuration, { ...users, 'breakwater.outcome': 'success' }),
    ).toMatchObject({ count: 1 });
    expect(await sdk.histogram(METRICS.callAttempts, users)).toEqual({ count: 1, sum: 3 });
    const [caller] = sdk.spans();
    expect(caller?.name).toBe('caller');
    expect(caller?.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'breakwater.retry',
        { 'breakwater.attempt': 1, 'breakwater.delay_ms': 5, 'error.type': 'FlakyError' },
      ],
      [
        'breakwater.retry',
        { 'breakwater.attempt': 2, 'breakwater.delay_ms': 10, 'error.type': 'FlakyError' },
      ],
    ]);
    expect((await everyAttributeValue(sdk)).filter((v) => v.includes('secret'))).toEqual([]);
  });

  it('attempt spans: one INTERNAL child of the caller per attempt, failed ones marked', async () => {
    const sdk = otelSdk({ attemptSpans: true });
    const run = protect({ retry: { attempts: 2, backoff: fixed }, telemetry: sdk.telemetry });
    let n = 0;
    await sdk.tracer.startActiveSpan('caller', async (span) => {
      await run(async () => {
        if (++n === 1) throw new FlakyError('x');
        return 1;
      });
      span.end();
    });
    const spans = sdk.spans();
    const caller = spans.find((s) => s.name === 'caller');
    const attempts = spans.filter((s) => s.name === 'breakwater.attempt');
    expect(
      attempts.map((s) => [
        s.attributes['breakwater.attempt'],
        s.attributes['breakwater.outcome'],
        s.status.code,
      ]),
    ).toEqual([
      [1, 'failure', 2],
      [2, 'success', 0],
    ]);
    for (const s of attempts) {
      expect(s.kind).toBe(0); // SpanKind.INTERNAL: never a second CLIENT span
      expect(s.parentSpanContext?.spanId).toBe(caller?.spanContext().spanId);
    }
  });

  it('a circuit that opens and closes gives its transitions and gauge values', async () => {
    const clock = createManualClock();
    const sdk = otelSdk();
    const run = protect({
      name: 'orders',
      circuit: { failureSpanMs: 0, failureThreshold: 2, openDurationMs: 100 },
      clock,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    const state = (s: string) =>
      sdk.gauge(METRICS.circuitState, {
        'breakwater.name': 'orders',
        'breakwater.circuit.state': s,
      });
    expect(await state('closed')).toBe(1);
    for (let i = 0; i < 2; i++)
      await expect(run(() => Promise.reject(new FlakyError('x')))).rejects.toThrow();
    expect(await state('open')).toBe(1);
    expect(await state('closed')).toBe(0);
    await expect(run(() => 'never')).rejects.toThrow(/circuit/i);
    expect(await sdk.sum(METRICS.refusals, { 'breakwater.reason': 'circuit-open' })).toBe(1);
    clock.advance(100);
    expect(await run(() => 'back')).toBe('back');
    expect(await state('closed')).toBe(1);
    const transitions = async (from: string, to: string) =>
      sdk.sum(METRICS.circuitTransitions, {
        'breakwater.circuit.from': from,
        'breakwater.circuit.to': to,
      });
    expect(await transitions('closed', 'open')).toBe(1);
    expect(await transitions('open', 'half-open')).toBe(1);
    expect(await transitions('half-open', 'closed')).toBe(1);
    expect(await sdk.sum(METRICS.circuitTransitions)).toBe(3);
    // The refused call: one call, no attempt.
    expect(await sdk.histogram(METRICS.callAttempts, { 'breakwater.outcome': 'refused' })).toEqual({
      count: 1,
      sum: 0,
    });
  });

  it('refusals are counted by reason, each with a span event', async () => {
    const clock = createManualClock();
    const sdk = otelSdk();
    const reasons = (reason: string) => sdk.sum(METRICS.refusals, { 'breakwater.reason': reason });

    const limited = protect({
      rateLimit: { capacity: 1, refillPerSecond: 0.001 },
      clock,
      telemetry: sdk.telemetry,
    });
    await limited(() => 1);
    await expect(limited(() => 1)).rejects.toThrow();
    expect(await reasons('rate-limited')).toBe(1);

    const bulkhead = protect({ concurrency: { limit: 1 }, telemetry: sdk.telemetry });
    let release = () => {};
    const holding = bulkhead(
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    await expect(bulkhead(() => undefined)).rejects.toThrow();
    release();
    await holding;
    expect(await reasons('queue-full')).toBe(1);

    const budgeted = protect({
      retry: { attempts: 3, backoff: fixed },
      budget: { ratio: 0, minRetriesPerSecond: 0 },
      clock,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    await expect(budgeted(() => Promise.reject(new FlakyError('x')))).rejects.toThrow('x');
    expect(await reasons('budget-exhausted')).toBe(1);

    const late = protect({
      retry: { attempts: 3, backoff: { baseDelayMs: 1_000, jitter: 'none' } },
      timeoutMs: 500,
      clock,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    await expect(late(() => Promise.reject(new FlakyError('x')))).rejects.toThrow('x');
    expect(await reasons('deadline-expired')).toBe(1);

    const timed = protect({
      attemptTimeoutMs: 50,
      clock,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    const call = expect(timed(() => new Promise(() => {}))).rejects.toThrow();
    await clock.advanceAsync(50);
    await call;
    expect(
      await sdk.sum(METRICS.deadlinesExceeded, { 'breakwater.deadline.scope': 'attempt' }),
    ).toBe(1);
    expect(await sdk.sum(METRICS.attempts, { 'breakwater.outcome': 'timeout' })).toBe(1);
  });

  it('a throwing telemetry never breaks the call', async () => {
    const boom = () => {
      throw new Error('observer bug');
    };
    const run = protect({
      retry: { attempts: 2, backoff: fixed },
      telemetry: {
        startCall: () => ({ attemptStart: boom, attemptEnd: boom, retry: boom, end: boom }),
      },
    });
    let n = 0;
    expect(await run(async () => (++n === 1 ? Promise.reject(new FlakyError('x')) : 'fine'))).toBe(
      'fine',
    );
    const broken = protect({ telemetry: { startCall: boom } });
    expect(await broken(() => 'still fine')).toBe('still fine');
  });

  it('a meter that throws (an SDK bug) never breaks the call', async () => {
    const broken = () => {
      throw new Error('sdk bug');
    };
    const instrument = { add: broken, record: broken, addCallback: () => {} };
    const meter = new Proxy({}, { get: () => () => instrument });
    const telemetry = otelTelemetry({ meterProvider: { getMeter: () => meter as never } });
    const run = protect({ retry: { attempts: 2, backoff: fixed }, telemetry });
    let n = 0;
    expect(await run(async () => (++n === 1 ? Promise.reject(new FlakyError('x')) : 'fine'))).toBe(
      'fine',
    );
  });

  it('option errors name the full path', () => {
    expect(() => protect({ telemetry: {} as never })).toThrow(/telemetry\.startCall/);
  });
});
