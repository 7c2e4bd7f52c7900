import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyGrpcStatus, createGrpcStatusClassifier, parsePushback } from './classifier.js';
import { GrpcStatus as status } from './status.js';

const trailers = (map: Record<string, string>) => (key: string) => map[key];

describe('classifyGrpcStatus', () => {
  it('retries UNAVAILABLE and counts it, marked unprocessed (its first retry goes at once)', () => {
    expect(classifyGrpcStatus(status.UNAVAILABLE, undefined)).toEqual({
      retry: true,
      failover: true,
      countForCircuit: true,
      unprocessed: true,
    });
    // Other retryable statuses may have done work: they back off as before.
    expect(
      classifyGrpcStatus(status.INTERNAL, undefined, { retryInternal: true }).unprocessed,
    ).toBeUndefined();
  });

  it('carries pushback on every retryable status; a bad value says do not retry', () => {
    const push = (value: string) => trailers({ 'grpc-retry-pushback-ms': value });
    expect(classifyGrpcStatus(status.UNAVAILABLE, push('300')).retryAfterMs).toBe(300);
    expect(classifyGrpcStatus(status.UNAVAILABLE, push('-1')).retryAfterMs).toBe(-1);
    expect(classifyGrpcStatus(status.UNAVAILABLE, push('soon')).retryAfterMs).toBe(-1);
    expect(classifyGrpcStatus(status.UNAVAILABLE, undefined).retryAfterMs).toBeUndefined();
    const perAttempt = { perAttemptDeadline: true };
    expect(classifyGrpcStatus(status.DEADLINE_EXCEEDED, push('50'), perAttempt).retryAfterMs).toBe(
      50,
    );
    // A status not retried keeps no pushback: there is nothing to delay.
    expect(classifyGrpcStatus(status.INVALID_ARGUMENT, push('50')).retryAfterMs).toBeUndefined();
  });

  it('marks UNAVAILABLE never sent only for a connection failure with no headers received', () => {
    const info = (details: string, headersReceived: boolean) => ({ details, headersReceived });
    const refused = 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1';
    for (const details of [
      refused,
      'round_robin: No connection established',
      'Stream refused by server',
    ]) {
      expect(
        classifyGrpcStatus(status.UNAVAILABLE, undefined, info(details, false)).neverSent,
      ).toBe(true);
    }
    // Headers came back: the server saw the call, whatever the text says.
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, info(refused, true)).neverSent,
    ).toBeUndefined();
    // A server's own UNAVAILABLE (trailers-only, so no headers) may have done work.
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, info('chaos: UNAVAILABLE', false))
        .neverSent,
    ).toBeUndefined();
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, { details: refused }).neverSent,
    ).toBeUndefined();
    const classify = createGrpcStatusClassifier();
    const input = {
      path: '/a.B/C',
      code: status.UNAVAILABLE,
      trailer: undefined,
      details: refused,
    };
    expect(classify({ ...input, headersReceived: false }).neverSent).toBe(true);
    expect(classify(input).neverSent).toBeUndefined();
  });

  it('never takes a server’s text for "never sent": a status carrying server metadata was answered', () => {
    // A middle tier forwarding its backend's grpc-js error: trailers-only, so no headers, but
    // the status carries the server's content-type and date.
    const forwarded = 'No connection established. Last error: connect ECONNREFUSED 10.0.0.7:50051';
    const noHeaders = { details: forwarded, headersReceived: false };
    for (const metadata of [
      { 'content-type': 'application/grpc+proto', date: 'Wed, 02 Dec 2026 05:22:30 GMT' },
      { 'content-type': 'application/grpc' },
      { date: 'Wed, 02 Dec 2026 05:22:30 GMT' },
    ]) {
      const verdict = classifyGrpcStatus(status.UNAVAILABLE, trailers(metadata), noHeaders);
      expect(verdict).toEqual({
        retry: true,
        failover: true,
        countForCircuit: true,
        unprocessed: true,
      });
    }
    // grpc-js's own status for the same words carries no metadata: never sent.
    expect(classifyGrpcStatus(status.UNAVAILABLE, trailers({}), noHeaders).neverSent).toBe(true);
    const classify = createGrpcStatusClassifier();
    const input = { path: '/a.B/C', code: status.UNAVAILABLE, ...noHeaders };
    expect(classify({ ...input, trailer: trailers({ date: 'x' }) }).neverSent).toBeUndefined();
    expect(classify({ ...input, trailer: trailers({}) }).neverSent).toBe(true);
  });

  it('retries RESOURCE_EXHAUSTED only with valid pushback, honoured as retryAfterMs', () => {
    expect(
      classifyGrpcStatus(status.RESOURCE_EXHAUSTED, trailers({ 'grpc-retry-pushback-ms': '300' })),
    ).toMatchObject({
      retry: true,
      retryAfterMs: 300,
    });
    for (const bad of ['-1', 'soon', '1.5', '']) {
      expect(
        classifyGrpcStatus(status.RESOURCE_EXHAUSTED, trailers({ 'grpc-retry-pushback-ms': bad }))
          .retry,
      ).toBe(false);
    }
    expect(classifyGrpcStatus(status.RESOURCE_EXHAUSTED, undefined).retry).toBe(false);
  });

  it('carries pushback on every retryable status; a bad one says do not retry (gRFC A6)', () => {
    const pushback = (value: string) => trailers({ 'grpc-retry-pushback-ms': value });
    expect(classifyGrpcStatus(status.UNAVAILABLE, pushback('300'))).toMatchObject({
      retry: true,
      retryAfterMs: 300,
    });
    expect(classifyGrpcStatus(status.UNAVAILABLE, pushback('-1')).retryAfterMs).toBe(-1);
    expect(classifyGrpcStatus(status.UNAVAILABLE, pushback('soon')).retryAfterMs).toBe(-1);
    expect(
      classifyGrpcStatus(status.DEADLINE_EXCEEDED, pushback('40'), { perAttemptDeadline: true })
        .retryAfterMs,
    ).toBe(40);
    expect(
      classifyGrpcStatus(status.ABORTED, pushback('7'), { retryAborted: true }).retryAfterMs,
    ).toBe(7);
  });

  it('marks UNAVAILABLE neverSent only for a connection that never carried the request', () => {
    const refused = 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1';
    // Merge of p-grpcjs and p-nice: p-nice's default (headersReceived: true, "the server may
    // have seen it") kept; both adapters pass headersReceived explicitly.
    const noHeaders = { headersReceived: false };
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, { ...noHeaders, details: refused })
        .neverSent,
    ).toBe(true);
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, {
        ...noHeaders,
        details: 'Stream refused by server',
      }).neverSent,
    ).toBe(true);
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, {
        details: refused,
        headersReceived: true,
      }).neverSent,
    ).toBeUndefined();
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, { details: 'Connection dropped' })
        .neverSent,
    ).toBeUndefined();
  });

  it('retries DEADLINE_EXCEEDED only under a per-attempt deadline, as timed out (no backoff)', () => {
    expect(classifyGrpcStatus(status.DEADLINE_EXCEEDED, undefined).retry).toBe(false);
    const perAttempt = classifyGrpcStatus(status.DEADLINE_EXCEEDED, undefined, {
      perAttemptDeadline: true,
    });
    expect(perAttempt).toMatchObject({ retry: true, timedOut: true });
    expect(classifyGrpcStatus(status.UNAVAILABLE, undefined).timedOut).toBeUndefined();
  });

  it('makes ABORTED, INTERNAL and UNKNOWN configurable', () => {
    expect(classifyGrpcStatus(status.ABORTED, undefined).retry).toBe(false);
    expect(classifyGrpcStatus(status.ABORTED, undefined, { retryAborted: true }).retry).toBe(true);
    expect(classifyGrpcStatus(status.INTERNAL, undefined, { retryInternal: true }).retry).toBe(
      true,
    );
    expect(classifyGrpcStatus(status.UNKNOWN, undefined, { retryUnknown: true }).retry).toBe(true);
  });

  it('never retries or counts caller errors, whatever the options', () => {
    const never = [
      status.INVALID_ARGUMENT,
      status.NOT_FOUND,
      status.ALREADY_EXISTS,
      status.PERMISSION_DENIED,
      status.UNAUTHENTICATED,
      status.FAILED_PRECONDITION,
      status.OUT_OF_RANGE,
      status.UNIMPLEMENTED,
      status.CANCELLED,
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...never),
        fc.boolean(),
        fc.boolean(),
        (code, perAttemptDeadline, retryAll) => {
          const v = classifyGrpcStatus(code, undefined, {
            perAttemptDeadline,
            retryAborted: retryAll,
            retryInternal: retryAll,
            retryUnknown: retryAll,
          });
          expect(v.retry).toBe(false);
          expect(v.countForCircuit).toBe(false);
        },
      ),
    );
  });

  it('caller cancellation is neutral even for UNAVAILABLE', () => {
    expect(
      classifyGrpcStatus(status.UNAVAILABLE, undefined, { cancelledByCaller: true }),
    ).toMatchObject({
      retry: false,
      countForCircuit: false,
    });
  });

  it('CANCELLED sent by the server may fail over (not retried, neutral); the caller’s is final', () => {
    expect(classifyGrpcStatus(status.CANCELLED, undefined)).toEqual({
      retry: false,
      failover: true,
      countForCircuit: false,
    });
    expect(classifyGrpcStatus(status.CANCELLED, undefined, { cancelledByCaller: true })).toEqual({
      retry: false,
      failover: false,
      countForCircuit: false,
    });
    const classify = createGrpcStatusClassifier();
    const input = { path: '/a.B/C', code: status.CANCELLED, trailer: undefined };
    expect(classify(input).failover).toBe(true);
    expect(classify({ ...input, cancelledByCaller: true }).failover).toBe(false);
  });

  it('client-side serialization failures do not count against the server', () => {
    const v = classifyGrpcStatus(status.INTERNAL, undefined, {
      details: 'Request message serialization failure: x',
    });
    expect(v.countForCircuit).toBe(false);
    expect(classifyGrpcStatus(status.INTERNAL, undefined).countForCircuit).toBe(true);
  });
});

describe('parsePushback', () => {
  it('reads whole milliseconds; anything else means do not retry', () => {
    expect(parsePushback(undefined)).toBeUndefined();
    expect(parsePushback(trailers({}))).toBeUndefined();
    expect(parsePushback(trailers({ 'grpc-retry-pushback-ms': '0' }))).toBe(0);
    expect(parsePushback(trailers({ 'grpc-retry-pushback-ms': '-5' }))).toBe(-1);
  });
});

describe('createGrpcStatusClassifier', () => {
  it('applies per-method and per-service settings', () => {
    const classify = createGrpcStatusClassifier({
      methods: { 'shop.Cart': { retryAborted: true }, '/shop.Cart/Pay': { retryAborted: false } },
    });
    const input = (path: string) => ({ path, code: status.ABORTED, trailer: undefined });
    expect(classify(input('/shop.Cart/Add')).retry).toBe(true);
    expect(classify(input('/shop.Cart/Pay')).retry).toBe(false);
    expect(classify(input('/shop.Other/Get')).retry).toBe(false);
  });

  it('lets an override have the last word', () => {
    const classify = createGrpcStatusClassifier({
      override: (input, verdict) =>
        input.code === status.FAILED_PRECONDITION ? { ...verdict, retry: true } : verdict,
    });
    expect(
      classify({ path: '/a.B/C', code: status.FAILED_PRECONDITION, trailer: undefined }).retry,
    ).toBe(true);
    expect(() => createGrpcStatusClassifier({ override: 1 as never })).toThrow(TypeError);
  });
});
