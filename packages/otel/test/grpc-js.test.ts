import {
  createEchoClient,
  echoUnary,
  type GrpcChaosServerOptions,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import {
  disableGrpcRetries,
  idempotentMethods,
  type ResilienceCallOptions,
  type ResilienceInterceptorOptions,
  resilienceInterceptor,
} from '@breakwater/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { METRICS } from '../src/index.js';
import { everyAttributeValue, fast, OFF, otelSdk, refusedCalls } from './sdk.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());
const UNAVAILABLE = 14;
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setup(options: ResilienceInterceptorOptions, server: GrpcChaosServerOptions = {}) {
  const s = await startGrpcChaosServer(server);
  cleanup.push(() => s.close());
  const client = createEchoClient(s.address, {
    ...disableGrpcRetries,
    interceptors: [resilienceInterceptor({ ...OFF, retry: false, idempotent, ...options })],
  });
  cleanup.push(() => client.close());
  return { server: s, client };
}

describe('otelTelemetry through grpc-js resilienceInterceptor (real chaos server)', () => {
  it('a retried call: counters with rpc.* attributes, histograms, span events, and no payload or metadata value anywhere', async () => {
    const sdk = otelSdk({ attemptSpans: true });
    const { client } = await setup(
      { retry: { attempts: 3, backoff: fast }, telemetry: sdk.telemetry },
      { faults: [{ firstAttempts: 2, status: UNAVAILABLE, details: 'secret-details' }] },
    );
    const outcome = await sdk.tracer.startActiveSpan('caller', async (span) => {
      const o = await echoUnary(
        client,
        { message: 'secret-payload' },
        { callId: 'secret-call-id' },
      );
      span.end();
      return o;
    });
    expect(outcome.ok).toBe(true);
    const unary = { 'rpc.system': 'grpc', 'rpc.method': 'Unary' };
    expect(
      await sdk.sum(METRICS.attempts, {
        ...unary,
        'breakwater.outcome': 'failure',
        'error.type': 'UNAVAILABLE',
        'rpc.grpc.status_code': 14,
      }),
    ).toBe(2);
    expect(
      await sdk.sum(METRICS.attempts, {
        ...unary,
        'breakwater.outcome': 'success',
        'rpc.grpc.status_code': 0,
      }),
    ).toBe(1);
    expect(await sdk.sum(METRICS.retries, { ...unary, 'error.type': 'UNAVAILABLE' })).toBe(2);
    expect(await sdk.histogram(METRICS.attemptDuration, unary)).toMatchObject({ count: 3 });
    expect(await sdk.histogram(METRICS.callAttempts, unary)).toEqual({ count: 1, sum: 3 });
    expect(
      await sdk.histogram(METRICS.callDuration, { ...unary, 'breakwater.outcome': 'success' }),
    ).toMatchObject({ count: 1 });
    const caller = sdk.spans().find((s) => s.name === 'caller');
    expect(caller?.events.map((e) => [e.name, e.attributes?.['breakwater.attempt']])).toEqual([
      ['breakwater.retry', 1],
      ['breakwater.retry', 2],
    ]);
    expect(sdk.spans().filter((s) => s.name === 'breakwater.attempt')).toHaveLength(3);
    const values = await everyAttributeValue(sdk);
    expect(values.filter((v) => v.includes('Echo'))).not.toHaveLength(0);
    expect(values.filter((v) => v.includes('secret'))).toEqual([]);
  });

  it('a circuit that opens and closes: transitions, gauge values, and the refusal', async () => {
    const sdk = otelSdk();
    const { server, client } = await setup(
      {
        circuit: { failureSpanMs: 0, failureThreshold: 2, openDurationMs: 100 },
        telemetry: sdk.telemetry,
      },
      { faults: [{ status: UNAVAILABLE }] },
    );
    const state = (s: string) =>
      sdk.gauge(METRICS.circuitState, { 'rpc.method': 'Unary', 'breakwater.circuit.state': s });
    for (let i = 0; i < 2; i++) expect((await echoUnary(client, {})).ok).toBe(false);
    expect(await state('open')).toBe(1);
    expect(await state('closed')).toBe(0);
    expect((await echoUnary(client, {})).ok).toBe(false);
    expect(
      await sdk.sum(METRICS.refusals, {
        'rpc.method': 'Unary',
        'breakwater.reason': 'circuit-open',
      }),
    ).toBe(1);
    server.setFaults([]);
    await new Promise((r) => setTimeout(r, 150));
    expect((await echoUnary(client, {})).ok).toBe(true);
    expect(await state('closed')).toBe(1);
    const transitions = (from: string, to: string) =>
      sdk.sum(METRICS.circuitTransitions, {
        'breakwater.circuit.from': from,
        'breakwater.circuit.to': to,
      });
    expect(await transitions('closed', 'open')).toBe(1);
    expect(await transitions('open', 'half-open')).toBe(1);
    expect(await transitions('half-open', 'closed')).toBe(1);
    // Three calls that ran, one refused before any attempt.
    expect(await sdk.sum(METRICS.attempts, { 'rpc.method': 'Unary' })).toBe(3);
    expect(await sdk.histogram(METRICS.callAttempts, { 'breakwater.outcome': 'refused' })).toEqual({
      count: 1,
      sum: 0,
    });
  });

  it('a call run as its own attempt (no retry stage) is timed as one attempt from the call’s start, with or without attempt spans', async () => {
    for (const attemptSpans of [false, true]) {
      const sdk = otelSdk({ attemptSpans });
      const { client } = await setup({ telemetry: sdk.telemetry });
      expect((await echoUnary(client, {})).ok).toBe(true);
      expect((await echoUnary(client, {})).ok).toBe(true);
      const attempts = await sdk.histogram(METRICS.attemptDuration);
      const calls = await sdk.histogram(METRICS.callDuration);
      expect(attempts.count).toBe(2);
      expect(calls.count).toBe(2);
      // Attempt 1 starts with the call (told or implied) and ends with it: the same readings.
      expect(attempts.sum).toBe(calls.sum);
      expect(sdk.spans().filter((s) => s.name === 'breakwater.attempt')).toHaveLength(
        attemptSpans ? 2 : 0,
      );
    }
  });

  it('refusals by reason: rate limited and queue full', async () => {
    const sdk = otelSdk();
    const limited = await setup({
      rateLimit: { capacity: 1, refillPerSecond: 0.001 },
      telemetry: sdk.telemetry,
    });
    expect((await echoUnary(limited.client, {})).ok).toBe(true);
    expect((await echoUnary(limited.client, {})).ok).toBe(false);
    const bulkhead = await setup(
      { concurrency: { limit: 1, maxQueue: 0 }, telemetry: sdk.telemetry },
      { faults: [{ firstAttempts: 1, latency: { kind: 'fixed', ms: 200 } }] },
    );
    const slow = echoUnary(bulkhead.client, {}, { callId: 'slow' });
    await new Promise((r) => setTimeout(r, 50));
    expect((await echoUnary(bulkhead.client, {}, { callId: 'refused' })).ok).toBe(false);
    expect((await slow).ok).toBe(true);
    expect(await sdk.sum(METRICS.refusals, { 'breakwater.reason': 'rate-limited' })).toBe(1);
    expect(await sdk.sum(METRICS.refusals, { 'breakwater.reason': 'queue-full' })).toBe(1);
  });

  it('a call whose deadline passed before it started is a refusal deadline-expired, not a deadline exceeded', async () => {
    const sdk = otelSdk();
    const { server, client } = await setup({ timeoutMs: 1_000, telemetry: sdk.telemetry });
    const late = await echoUnary(
      client,
      {},
      { callId: 'late', callOptions: { deadline: new Date(0) } },
    );
    expect(late.ok).toBe(false);
    expect(late.ok ? undefined : late.error.code).toBe(4);
    expect(server.attempts('late')).toBe(0);
    expect(await refusedCalls(sdk, 'deadline-expired')).toEqual({
      refusals: 1,
      deadlinesExceeded: 0,
      attempts: 0,
      callAttempts: { count: 1, sum: 0 },
    });
  });

  it('hedges sent and won add up', async () => {
    const sdk = otelSdk();
    const { client } = await setup(
      { hedge: { delayMs: 30, attempts: 2 }, telemetry: sdk.telemetry },
      { faults: [{ firstAttempts: 1, latency: { kind: 'fixed', ms: 1_000 } }] },
    );
    const outcomes = await Promise.all(
      ['h1', 'h2'].map((callId) => echoUnary(client, {}, { callId })),
    );
    expect(outcomes.map((o) => o.value?.attempt)).toEqual([2, 2]);
    expect(await sdk.sum(METRICS.hedgesSent)).toBe(2);
    expect(await sdk.sum(METRICS.hedgesWon)).toBe(2);
    // The abandoned first attempts are not counted as failures.
    expect(await sdk.sum(METRICS.attempts, { 'breakwater.outcome': 'failure' })).toBe(0);
  });
});

describe('otelTelemetry: the adaptive concurrency limit (real chaos server)', () => {
  it('reports the limit, the calls in flight and the refusals by criticality, per method', async () => {
    const sdk = otelSdk();
    const { server, client } = await setup(
      { concurrency: { adaptive: { initialLimit: 4 } }, telemetry: sdk.telemetry },
      { faults: [{ latency: { kind: 'fixed', ms: 300 } }] },
    );
    const unary = { 'rpc.service': 'breakwater.chaos.v1.Echo', 'rpc.method': 'Unary' };
    const running = [echoUnary(client, {}), echoUnary(client, {})];
    await expect.poll(() => server.total()).toBe(2);
    // Two of four in flight: half the limit, all a sheddable call may use.
    const sheddable: ResilienceCallOptions = { criticality: 'sheddable' };
    const refused = await echoUnary(client, {}, { callOptions: sheddable });
    expect(refused.ok).toBe(false);

    expect(await sdk.gauge(METRICS.concurrencyLimit, unary)).toBe(4);
    expect(await sdk.gauge(METRICS.concurrencyInFlight, unary)).toBe(2);
    const tier = (c: string) =>
      sdk.sum(METRICS.concurrencyRefusals, { ...unary, 'breakwater.criticality': c });
    expect(await tier('sheddable')).toBe(1);
    expect(await tier('default')).toBe(0);
    expect(await tier('critical')).toBe(0);
    expect(
      await sdk.sum(METRICS.refusals, { ...unary, 'breakwater.reason': 'concurrency-limit' }),
    ).toBe(1);
    await Promise.all(running);
    expect(await sdk.gauge(METRICS.concurrencyInFlight, unary)).toBe(0);
  });
});
