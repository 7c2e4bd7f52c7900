import { resilienceLink, routingLink } from '@breakwater/trpc';
import { describe, expect, it } from 'vitest';
import { batchLink, chaos, clientOf, errorOf } from '../../trpc/test/helpers.js';
import { METRICS } from '../src/index.js';
import { counting, everyAttributeValue, fast, OFF, otelSdk } from './sdk.js';

describe('otelTelemetry through tRPC resilienceLink (real chaos server)', () => {
  it('a retried query: counters by tRPC code, histograms, span events; no input or header value anywhere', async () => {
    const sdk = otelSdk();
    const server = await chaos({ faults: { failFirst: 2 } });
    const client = clientOf([
      resilienceLink({ ...OFF, retry: { attempts: 3, backoff: fast }, telemetry: sdk.telemetry }),
      batchLink(server.url),
    ]);
    const result = await sdk.inCallerSpan(() =>
      client.echo.query('secret-input', { context: { callId: 'secret-call-id' } }),
    );
    expect(result).toEqual({ value: 'secret-input', server: 'trpc' });
    const echo = { 'rpc.system': 'trpc', 'rpc.method': 'echo' };
    expect(
      await sdk.sum(METRICS.attempts, {
        ...echo,
        'breakwater.outcome': 'failure',
        'error.type': 'SERVICE_UNAVAILABLE',
      }),
    ).toBe(2);
    expect(await sdk.sum(METRICS.attempts, { ...echo, 'breakwater.outcome': 'success' })).toBe(1);
    expect(await sdk.sum(METRICS.retries, { ...echo, 'error.type': 'SERVICE_UNAVAILABLE' })).toBe(
      2,
    );
    expect(await sdk.histogram(METRICS.callAttempts, echo)).toEqual({ count: 1, sum: 3 });
    expect(await sdk.histogram(METRICS.attemptDuration, echo)).toMatchObject({ count: 3 });
    const caller = sdk.spans().find((s) => s.name === 'caller');
    expect(caller?.events.map((e) => e.name)).toEqual(['breakwater.retry', 'breakwater.retry']);
    expect((await everyAttributeValue(sdk)).filter((v) => v.includes('secret'))).toEqual([]);
  });

  it('a query that waited for a bulkhead slot: its attempt is timed from the wait’s end, its call from its start', async () => {
    const sdk = otelSdk();
    // Each call's attempt takes 100 ms on the server.
    const server = await chaos({ faults: { steps: [{ delayMs: 100 }] } });
    const client = clientOf([
      resilienceLink({
        ...OFF,
        retry: false,
        concurrency: { limit: 1, maxQueue: 1 },
        telemetry: sdk.telemetry,
      }),
      batchLink(server.url),
    ]);
    const results = await Promise.all(
      ['holding', 'queued'].map((callId) => client.echo.query(callId, { context: { callId } })),
    );
    expect(results.map((r) => r.value)).toEqual(['holding', 'queued']);
    const attempts = await sdk.histogram(METRICS.attemptDuration);
    const calls = await sdk.histogram(METRICS.callDuration);
    expect(attempts.count).toBe(2);
    expect(calls.count).toBe(2);
    // The holding call's attempt is its call (started with it); the queued call's call also spans
    // the holding call's 100 ms, its attempt does not. Timed from the call's start it would.
    expect(calls.sum - attempts.sum).toBeGreaterThanOrEqual(0.09);
  });

  it('hedges sent and won add up; refusals by reason (rate limited, circuit open)', async () => {
    const sdk = otelSdk();
    const server = await chaos({ faults: { steps: [{ delayMs: 1_000 }] } });
    const hedged = clientOf([
      resilienceLink({ ...OFF, hedge: { delayMs: 30, attempts: 2 }, telemetry: sdk.telemetry }),
      batchLink(server.url),
    ]);
    // One after the other: calls in flight together would share one HTTP batch (and one call id).
    const results = [];
    for (const callId of ['h1', 'h2'])
      results.push(await hedged.echo.query(callId, { context: { callId } }));
    expect(results.map((r) => r.value)).toEqual(['h1', 'h2']);
    expect(await sdk.sum(METRICS.hedgesSent)).toBe(2);
    expect(await sdk.sum(METRICS.hedgesWon)).toBe(2);

    const limited = clientOf([
      resilienceLink({
        ...OFF,
        retry: false,
        rateLimit: { capacity: 1, refillPerSecond: 0.001 },
        telemetry: sdk.telemetry,
      }),
      batchLink(server.url),
    ]);
    await limited.echo.query('a');
    await errorOf(limited.echo.query('b'));
    expect(await sdk.sum(METRICS.refusals, { 'breakwater.reason': 'rate-limited' })).toBe(1);

    const failing = await chaos({ faults: { failFirst: 100 } });
    const guarded = clientOf([
      resilienceLink({
        ...OFF,
        retry: false,
        circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
        telemetry: sdk.telemetry,
      }),
      batchLink(failing.url),
    ]);
    await errorOf(guarded.echo.query('x', { context: { callId: 'c1' } }));
    await errorOf(guarded.echo.query('x', { context: { callId: 'c2' } }));
    expect(await sdk.sum(METRICS.refusals, { 'breakwater.reason': 'circuit-open' })).toBe(1);
    expect(
      await sdk.gauge(METRICS.circuitState, {
        'rpc.system': 'trpc',
        'breakwater.circuit.state': 'open',
      }),
    ).toBe(1);
    expect(await sdk.histogram(METRICS.callAttempts, { 'breakwater.outcome': 'refused' })).toEqual({
      count: 2,
      sum: 0,
    });
  });

  it('routingLink with a hedge (two routers inside): one failover, targets and circuits told once, the gauge shows the circuit that opened', async () => {
    const sdk = otelSdk();
    const { told, counted } = counting(sdk.telemetry);
    const down = await chaos({ faults: { failFirst: 100 } });
    const up = await chaos();
    const client = clientOf([
      routingLink({
        endpoints: [
          { id: 'down', link: batchLink(down.url) },
          { id: 'up', link: batchLink(up.url) },
        ],
        // The down endpoint first, every time (the default least-loaded pick is random).
        selection: 'priority',
        hedge: { delayMs: 60_000, attempts: 2 },
        protection: { circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 } },
        telemetry: counted,
      }),
    ]);
    expect(await client.echo.query('q', { context: { callId: 'q1' } })).toMatchObject({
      value: 'q',
    });
    expect(
      await sdk.sum(METRICS.failovers, {
        'breakwater.name': 'router',
        'breakwater.provider': 'down',
      }),
    ).toBe(1);
    expect(await sdk.sum(METRICS.attempts, { 'breakwater.name': 'router' })).toBe(
      (down.stats().attempts.q1 ?? 0) + (up.stats().attempts.q1 ?? 0),
    );
    expect(down.stats().attempts.q1).toBe(1);
    expect(told.providers).toBe(1);
    expect(told.circuits.sort()).toEqual(['down', 'up']);
    expect(
      await sdk.gauge(METRICS.circuitState, {
        'breakwater.name': 'down',
        'breakwater.circuit.state': 'open',
      }),
    ).toBe(1);
    expect(await sdk.gauge(METRICS.providerHealth, { 'breakwater.provider': 'down' })).toBe(0);
  });
});
