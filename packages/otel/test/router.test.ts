import { type CallTelemetry, createRouter } from '@breakwater/core';
import { createManualClock } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../src/index.js';
import { otelSdk } from './sdk.js';

class DownError extends Error {
  override name = 'DownError';
}

describe('otelTelemetry through the router', () => {
  it('a failover is counted with the provider left, and an event on the caller span', async () => {
    const sdk = otelSdk();
    const router = createRouter({
      providers: [
        { id: 'eu', resource: 'eu' },
        { id: 'us', resource: 'us' },
      ],
      telemetry: sdk.telemetry,
    });
    const value = await sdk.tracer.startActiveSpan('caller', async (span) => {
      const v = await router.execute(async (resource) => {
        if (resource === 'eu') throw new DownError('eu is down');
        return resource;
      });
      span.end();
      return v;
    });
    expect(value).toBe('us');
    expect(
      await sdk.sum(METRICS.failovers, { 'breakwater.provider': 'eu', 'error.type': 'DownError' }),
    ).toBe(1);
    expect(
      await sdk.sum(METRICS.attempts, {
        'breakwater.name': 'router',
        'breakwater.outcome': 'failure',
      }),
    ).toBe(1);
    expect(
      await sdk.sum(METRICS.attempts, {
        'breakwater.name': 'router',
        'breakwater.outcome': 'success',
      }),
    ).toBe(1);
    expect(await sdk.histogram(METRICS.callAttempts, { 'breakwater.name': 'router' })).toEqual({
      count: 1,
      sum: 2,
    });
    const caller = sdk.spans().find((s) => s.name === 'caller');
    expect(caller?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['breakwater.failover', { 'breakwater.provider': 'eu', 'error.type': 'DownError' }],
    ]);
  });

  it('hedges sent and won add up', async () => {
    const clock = createManualClock();
    const sdk = otelSdk();
    const router = createRouter({
      providers: [
        { id: 'slow', resource: 'slow' },
        { id: 'fast', resource: 'fast' },
      ],
      hedge: { delayMs: 10, attempts: 2 },
      clock,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    // Slow answers after 100 ms, fast at once: every call hedges after 10 ms, and the hedge wins.
    const call = () =>
      router.execute((resource, { signal }) =>
        resource === 'fast' ? 'fast' : clock.sleep(100, signal).then(() => 'slow'),
      );
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await clock.run(call()));
    expect(results).toEqual(['fast', 'fast', 'fast']);
    // A call answered before its hedge delay sends no hedge.
    const quick = createRouter({
      providers: [
        { id: 'a', resource: 'a' },
        { id: 'b', resource: 'b' },
      ],
      hedge: { delayMs: 10, attempts: 2 },
      clock,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    expect(await quick.execute((r) => r)).toBe('a');
    expect(await sdk.sum(METRICS.hedgesSent)).toBe(3);
    expect(await sdk.sum(METRICS.hedgesWon)).toBe(3);
    // Three hedged calls made two visits each; the quick one made one, so it is counted by
    // breakwater.call.duration and not recorded in breakwater.call.attempts (README).
    expect(await sdk.histogram(METRICS.callAttempts)).toEqual({ count: 3, sum: 6 });
    expect(await sdk.histogram(METRICS.callDuration)).toMatchObject({ count: 4 });
  });

  it('each provider circuit is watched under its provider id; provider health follows it', async () => {
    const sdk = otelSdk();
    const router = createRouter({
      providers: [{ id: 'only', resource: 1 }],
      protection: { circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 } },
      telemetry: sdk.telemetry,
    });
    const health = () =>
      sdk.gauge(METRICS.providerHealth, {
        'breakwater.name': 'router',
        'breakwater.provider': 'only',
      });
    expect(await health()).toBe(1);
    await expect(router.execute(() => Promise.reject(new DownError('x')))).rejects.toThrow();
    expect(await health()).toBe(0);
    expect(
      await sdk.gauge(METRICS.circuitState, {
        'breakwater.name': 'only',
        'breakwater.circuit.state': 'open',
      }),
    ).toBe(1);
    await expect(router.execute(() => 1)).rejects.toThrow();
    expect(await sdk.sum(METRICS.refusals, { 'breakwater.reason': 'circuit-open' })).toBe(1);
  });

  it('a request refused by the router’s full queue, or arriving after its deadline, is a refusal by reason', async () => {
    const sdk = otelSdk();
    const clock = createManualClock();
    const router = createRouter({
      providers: [{ id: 'eu', resource: 'eu' }],
      concurrency: { limit: 1, maxQueue: 0 },
      clock,
      sleep: clock.sleep,
      telemetry: sdk.telemetry,
    });
    let release = () => {};
    const holding = router.execute(
      () =>
        new Promise<string>((r) => {
          release = () => r('held');
        }),
    );
    await expect(router.execute(async () => 'never')).rejects.toThrow(/queue/i);
    release();
    expect(await holding).toBe('held');
    let ran = false;
    const late = router.execute(
      async () => {
        ran = true;
        return 'late';
      },
      { deadlineAt: clock() - 1 },
    );
    await expect(late).rejects.toMatchObject({ name: 'DeadlineExceededError' });
    expect(ran).toBe(false);
    const reason = (r: string) => sdk.sum(METRICS.refusals, { 'breakwater.reason': r });
    expect(await reason('queue-full')).toBe(1);
    expect(await reason('deadline-expired')).toBe(1);
    expect(await sdk.histogram(METRICS.callAttempts, { 'breakwater.outcome': 'refused' })).toEqual({
      count: 2,
      sum: 0,
    });
    expect(await sdk.sum(METRICS.deadlinesExceeded)).toBe(0);
  });

  it('a routed success tells its start and end with two clock readings: the first visit starts with the request, the winning visit ends it', async () => {
    // Every read moves the clock on, so readings shared show as equal numbers and others do not.
    let t = 0;
    const clock = () => ++t;
    const told: Array<[string, number]> = [];
    const call: CallTelemetry = {
      attemptStart: (n, now) => told.push([`start ${n}`, now]),
      attemptEnd: (n, outcome, _type, now) => told.push([`${outcome} ${n}`, now]),
      end: (outcome, _n, _type, now) => told.push([outcome, now]),
    };
    const router = createRouter({
      providers: [
        { id: 'eu', resource: 'eu' },
        { id: 'us', resource: 'us' },
      ],
      clock,
      telemetry: {
        startCall: (_target, now) => {
          told.push(['call', now]);
          return call;
        },
      },
    });
    expect(await router.execute(async (resource) => resource)).toBe('eu');
    const at = Object.fromEntries(told);
    expect(told.map(([event]) => event)).toEqual(['call', 'start 1', 'success 1', 'success']);
    expect(at['start 1']).toBe(at.call);
    expect(at.success).toBe(at['success 1']);

    // A visit after a failure (a failover) reads its own start; the failure's end is not it.
    told.length = 0;
    expect(
      await router.execute(async (resource) => {
        if (resource === 'eu') throw new DownError('eu is down');
        return resource;
      }),
    ).toBe('us');
    const failover = Object.fromEntries(told);
    expect(told.map(([event]) => event)).toEqual([
      'call',
      'start 1',
      'failure 1',
      'start 2',
      'success 2',
      'success',
    ]);
    expect(failover['start 2']).toBeGreaterThan(failover['failure 1'] as number);
    expect(failover.success).toBe(failover['success 2']);
  });
});
