import { describe, expect, it } from 'vitest';
import type { ResilienceWarning } from '../internal/warning.js';
import { fromServiceConfig } from './service-config.js';
import { GrpcStatus } from './status.js';

// gRFC A6's examples (retry, hedging, throttling), as its text gives them.
const A6_RETRY = {
  maxAttempts: 4,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};
const A6_HEDGE = {
  maxAttempts: 4,
  hedgingDelay: '0.5s',
  nonFatalStatusCodes: ['UNAVAILABLE', 'INTERNAL', 'ABORTED'],
};
const A6_THROTTLING = { maxTokens: 10, tokenRatio: 0.1 };

function warningsOf(json: string | object): ResilienceWarning[] {
  const warnings: ResilienceWarning[] = [];
  fromServiceConfig(json, { onWarning: (w) => warnings.push(w) });
  return warnings;
}

const input = (path: string, code: number, pushback?: string) => ({
  path,
  code,
  trailer: (key: string) => (key === 'grpc-retry-pushback-ms' ? pushback : undefined),
});

describe('fromServiceConfig', () => {
  it("A6's retry policy on the default entry: the client's retry, gRPC's backoff, every method idempotent", () => {
    const options = fromServiceConfig(
      JSON.stringify({ methodConfig: [{ name: [{}], retryPolicy: A6_RETRY, timeout: '2s' }] }),
    );
    expect(options).toMatchObject({
      timeoutMs: 2_000,
      attemptTimeoutMs: false,
      idempotent: 'all',
      retry: {
        attempts: 4,
        backoff: {
          baseDelayMs: 100,
          maxDelayMs: 1_000,
          factor: 2,
          strategy: 'exponential',
          jitter: 'proportional',
        },
      },
    });
    expect(options.methods).toBeUndefined();
    expect(options.hedge).toBeUndefined();
    expect(options.budget).toBeUndefined();
  });

  it("A6's hedging policy per service and its throttling: a complete methods entry and the closest budget", () => {
    const options = fromServiceConfig({
      methodConfig: [{ name: [{ service: 'grpc.examples.echo.Echo' }], hedgingPolicy: A6_HEDGE }],
      retryThrottling: A6_THROTTLING,
    });
    expect(options.methods).toEqual({
      'grpc.examples.echo.Echo': {
        timeoutMs: false,
        hedge: { attempts: 4, delayMs: 500 },
        idempotent: true,
      },
    });
    expect(options).toMatchObject({ timeoutMs: false, attemptTimeoutMs: false });
    expect(options.idempotent).toBeUndefined();
    expect(options.budget).toEqual({ ratio: 0.1, minRetriesPerSecond: 0.5, ttlMs: 10_000 });
  });

  it('retries exactly the listed statuses of the entry A6 picks: method, else service, else default', () => {
    const { classify, methods } = fromServiceConfig({
      methodConfig: [
        { name: [{}], retryPolicy: { ...A6_RETRY, retryableStatusCodes: [14] } },
        {
          name: [{ service: 'shop.Cart' }],
          retryPolicy: { ...A6_RETRY, retryableStatusCodes: ['aborted', 'RESOURCE_EXHAUSTED'] },
        },
        // A method's own entry replaces its service's: no policy, so not repeated.
        { name: [{ service: 'shop.Cart', method: 'Pay' }], timeout: '0.25s' },
      ],
    });
    expect(classify(input('/shop.Stock/Get', GrpcStatus.UNAVAILABLE)).retry).toBe(true);
    expect(classify(input('/shop.Stock/Get', GrpcStatus.ABORTED)).retry).toBe(false);
    expect(classify(input('/shop.Cart/Add', GrpcStatus.ABORTED)).retry).toBe(true);
    // Listed, so retried without the pushback Breakwater's default asks of RESOURCE_EXHAUSTED.
    expect(classify(input('/shop.Cart/Add', GrpcStatus.RESOURCE_EXHAUSTED)).retry).toBe(true);
    expect(classify(input('/shop.Cart/Add', GrpcStatus.UNAVAILABLE)).retry).toBe(false);
    // Pushback replaces the backoff; a negative one stops the retries.
    expect(classify(input('/shop.Cart/Add', GrpcStatus.ABORTED, '30')).retryAfterMs).toBe(30);
    expect(classify(input('/shop.Cart/Add', GrpcStatus.ABORTED, '-1')).retryAfterMs).toBe(-1);
    expect(methods?.['/shop.Cart/Pay']).toEqual({
      timeoutMs: 250,
      hedge: false,
      idempotent: false,
    });
    expect(methods?.['shop.Cart']?.idempotent).toBe(true);
  });

  it('a call that never left is retried for any method (grpc-js transparent retry); a caller cancel never', () => {
    const { classify } = fromServiceConfig({
      methodConfig: [{ name: [{}], retryPolicy: { ...A6_RETRY, retryableStatusCodes: [1] } }],
    });
    const neverSent = {
      ...input('/a.B/C', GrpcStatus.UNAVAILABLE),
      details: 'No connection established',
      headersReceived: false,
    };
    expect(classify(neverSent)).toMatchObject({ retry: true, neverSent: true });
    expect(
      classify({ ...input('/a.B/C', GrpcStatus.CANCELLED), cancelledByCaller: true }).retry,
    ).toBe(false);
    expect(classify(input('/a.B/C', GrpcStatus.CANCELLED)).retry).toBe(true);
  });

  it('hedging without nonFatalStatusCodes: every status is fatal', () => {
    const { classify } = fromServiceConfig({
      methodConfig: [{ name: [{}], hedgingPolicy: { maxAttempts: 3 } }],
    });
    expect(classify(input('/a.B/C', GrpcStatus.UNAVAILABLE)).retry).toBe(false);
  });

  it('reads durations as proto3 JSON: "1.5s" is 1.5 s, and { seconds, nanos } as grpc-js does', () => {
    const timeout = (t: unknown) =>
      fromServiceConfig({ methodConfig: [{ name: [{}], timeout: t }] }).timeoutMs;
    expect(timeout('1.5s')).toBe(1_500);
    expect(timeout('0.000001s')).toBeCloseTo(0.001);
    expect(timeout({ seconds: 1, nanos: 500_000_000 })).toBe(1_500);
  });

  it("grpc-js's own test config: maxAttempts 10 counts as 5, named in a warning", () => {
    const json = {
      loadBalancingConfig: [],
      methodConfig: [
        {
          name: [{ service: 'test.EchoService' }],
          retryPolicy: {
            maxAttempts: 10,
            initialBackoff: '0.1s',
            maxBackoff: '10s',
            backoffMultiplier: 1.2,
            retryableStatusCodes: [14, 'RESOURCE_EXHAUSTED'],
          },
        },
      ],
      retryThrottling: { maxTokens: 1000, tokenRatio: 0.1 },
    };
    expect(fromServiceConfig(json, { onWarning: () => {} }).methods?.['test.EchoService']).toEqual({
      timeoutMs: false,
      hedge: false,
      idempotent: true,
      retry: {
        attempts: 5,
        backoff: {
          baseDelayMs: 100,
          maxDelayMs: 10_000,
          factor: 1.2,
          strategy: 'exponential',
          jitter: 'proportional',
        },
      },
    });
    const [warning, ...more] = warningsOf(json);
    expect(more).toEqual([]);
    expect(warning?.code).toBe('service-config-not-applied');
    expect(warning?.message).toMatch(
      /loadBalancingConfig, methodConfig\[0\]\.retryPolicy\.maxAttempts above 5/,
    );
  });

  it("names the channel's fields it does not apply in one warning, and warns of nothing else", () => {
    const [warning, ...more] = warningsOf({
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [{ name: [{}], waitForReady: true, maxResponseMessageBytes: 1024 }],
    });
    expect(more).toEqual([]);
    expect(warning?.message).toContain(
      'loadBalancingConfig, methodConfig[0].waitForReady, methodConfig[0].maxResponseMessageBytes',
    );
    expect(warningsOf({ methodConfig: [{ name: [{}], retryPolicy: A6_RETRY }] })).toEqual([]);
  });

  it.each([
    [
      'a timeout without its s',
      { name: [{}], timeout: '1.5' },
      TypeError,
      /methodConfig\[0\]\.timeout must be a duration.*"1\.5"/,
    ],
    [
      'maxAttempts below 2',
      { name: [{}], retryPolicy: { ...A6_RETRY, maxAttempts: 1 } },
      RangeError,
      /methodConfig\[0\]\.retryPolicy\.maxAttempts must be an integer >= 2, got 1/,
    ],
    [
      'a typo in a field',
      { name: [{}], retryPolcy: A6_RETRY },
      TypeError,
      /unknown option `methodConfig\[0\]\.retryPolcy` — did you mean `methodConfig\[0\]\.retryPolicy`/,
    ],
    [
      'both policies',
      { name: [{}], retryPolicy: A6_RETRY, hedgingPolicy: A6_HEDGE },
      TypeError,
      /methodConfig\[0\] has both retryPolicy and hedgingPolicy/,
    ],
    [
      'an unknown status name',
      { name: [{}], retryPolicy: { ...A6_RETRY, retryableStatusCodes: ['UNAVAILBLE'] } },
      TypeError,
      /retryPolicy\.retryableStatusCodes\[0\] must be a gRPC status code/,
    ],
    [
      'no retryable statuses',
      { name: [{}], retryPolicy: { ...A6_RETRY, retryableStatusCodes: [] } },
      RangeError,
      /retryableStatusCodes must list at least one/,
    ],
    [
      'a shrinking backoff',
      { name: [{}], retryPolicy: { ...A6_RETRY, backoffMultiplier: 0.5 } },
      RangeError,
      /backoffMultiplier must be a number >= 1/,
    ],
    [
      'a method without a service',
      { name: [{ method: 'Get' }] },
      TypeError,
      /methodConfig\[0\]\.name\[0\]\.method is set without a service/,
    ],
    [
      'a service without a package',
      { name: [{ service: 'EchoService' }] },
      TypeError,
      /methodConfig\[0\]\.name\[0\]\.service is "EchoService": a whole service is selected by its package-qualified name/,
    ],
    [
      'a zero timeout',
      { name: [{}], timeout: '0s' },
      RangeError,
      /methodConfig\[0\]\.timeout must be above 0s/,
    ],
  ])('throws on %s, naming the JSON path', (_, entry, kind, message) => {
    const call = () => fromServiceConfig({ methodConfig: [entry] });
    expect(call).toThrow(kind);
    expect(call).toThrow(message);
  });

  it('throws on invalid JSON, a name given twice, bad throttling and unknown top-level fields', () => {
    expect(() => fromServiceConfig('{"methodConfig": [')).toThrow(
      /fromServiceConfig: json is not valid JSON/,
    );
    expect(() =>
      fromServiceConfig({ methodConfig: [{ name: [{}] }, { name: [{ service: '' }] }] }),
    ).toThrow(
      /methodConfig\[1\]\.name\[0\] names "\{\}" again \(first at methodConfig\[0\]\.name\[0\]\)/,
    );
    expect(() => fromServiceConfig({ retryThrottling: { maxTokens: 0, tokenRatio: 1 } })).toThrow(
      /retryThrottling\.maxTokens must be a number in \(0, 1000\], got 0/,
    );
    expect(() => fromServiceConfig({ retryThrotling: A6_THROTTLING })).toThrow(
      /did you mean `retryThrottling`/,
    );
    expect(() => fromServiceConfig('[]')).toThrow(/json must be a service config object/);
  });
});
