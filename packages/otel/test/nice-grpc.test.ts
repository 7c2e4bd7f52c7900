import { resilienceMiddleware } from '@breakwater/nice-grpc';
import { describe, expect, it } from 'vitest';
import { callId, chaosServer, echoClient, rejection } from '../../nice-grpc/test/helpers.js';
import { METRICS } from '../src/index.js';
import { everyAttributeValue, fast, OFF, otelSdk, refusedCalls } from './sdk.js';

const UNAVAILABLE = 14;
describe('otelTelemetry through nice-grpc resilienceMiddleware (real chaos server)', () => {
  it('a retried call: counters, histograms, span events; no payload or metadata value anywhere', async () => {
    const sdk = otelSdk();
    const server = await chaosServer({
      faults: [{ firstAttempts: 2, status: UNAVAILABLE, details: 'secret-details' }],
    });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        ...OFF,
        retry: { attempts: 3, backoff: fast },
        telemetry: sdk.telemetry,
      }),
    );
    const response = await sdk.inCallerSpan(() =>
      client.Unary({ message: 'secret-payload' }, callId('secret-call-id')),
    );
    expect(response.attempt).toBe(3);
    const unary = { 'rpc.system': 'grpc', 'rpc.method': 'Unary' };
    expect(
      await sdk.sum(METRICS.attempts, {
        ...unary,
        'breakwater.outcome': 'failure',
        'rpc.grpc.status_code': 14,
      }),
    ).toBe(2);
    expect(await sdk.sum(METRICS.attempts, { ...unary, 'breakwater.outcome': 'success' })).toBe(1);
    expect(await sdk.sum(METRICS.retries, { ...unary, 'error.type': 'UNAVAILABLE' })).toBe(2);
    expect(await sdk.histogram(METRICS.callAttempts, unary)).toEqual({ count: 1, sum: 3 });
    expect(await sdk.histogram(METRICS.attemptDuration, unary)).toMatchObject({ count: 3 });
    const caller = sdk.spans().find((s) => s.name === 'caller');
    expect(caller?.events.map((e) => e.name)).toEqual(['breakwater.retry', 'breakwater.retry']);
    expect((await everyAttributeValue(sdk)).filter((v) => v.includes('secret'))).toEqual([]);
  });

  it('a call whose deadline passed before it started is a refusal deadline-expired, not a deadline exceeded', async () => {
    const sdk = otelSdk();
    const server = await chaosServer({});
    const client = echoClient(
      server.address,
      resilienceMiddleware({ ...OFF, timeoutMs: 1_000, telemetry: sdk.telemetry }),
    );
    const error = await rejection(client.Unary({}, { deadline: new Date(0) }));
    expect(error.code).toBe(4);
    expect(await refusedCalls(sdk, 'deadline-expired')).toEqual({
      refusals: 1,
      deadlinesExceeded: 0,
      attempts: 0,
      callAttempts: { count: 1, sum: 0 },
    });
  });

  it('hedges sent and won add up; a circuit refusal is counted by reason', async () => {
    const sdk = otelSdk();
    const server = await chaosServer({
      faults: [{ firstAttempts: 1, latency: { kind: 'fixed', ms: 1_000 } }],
    });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        ...OFF,
        hedge: { delayMs: 30, attempts: 2 },
        telemetry: sdk.telemetry,
      }),
    );
    const responses = await Promise.all(['h1', 'h2'].map((id) => client.Unary({}, callId(id))));
    expect(responses.map((r) => r.attempt)).toEqual([2, 2]);
    expect(await sdk.sum(METRICS.hedgesSent)).toBe(2);
    expect(await sdk.sum(METRICS.hedgesWon)).toBe(2);

    const failing = await chaosServer({ faults: [{ status: UNAVAILABLE }] });
    const guarded = echoClient(
      failing.address,
      resilienceMiddleware({
        ...OFF,
        retry: false,
        circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
        telemetry: sdk.telemetry,
      }),
    );
    await rejection(guarded.Unary({}));
    await rejection(guarded.Unary({}));
    expect(await sdk.sum(METRICS.refusals, { 'breakwater.reason': 'circuit-open' })).toBe(1);
    expect(
      await sdk.gauge(METRICS.circuitState, {
        'rpc.method': 'Unary',
        'breakwater.circuit.state': 'open',
      }),
    ).toBe(1);
    expect(await sdk.sum(METRICS.circuitTransitions, { 'breakwater.circuit.to': 'open' })).toBe(1);
  });
});
