import { CircuitOpenError, DeadlineExceededError, OperationAbortedError } from '@breakwater/core';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { classifyTRPCError, createTRPCErrorClassifier } from './classify.js';

const server = (code: string, httpStatus: number, headers: Record<string, string> = {}) =>
  TRPCClientError.from(
    { error: { code: -32603, message: code, data: { code, httpStatus } } },
    { meta: { response: new Response(null, { status: httpStatus, headers }) } },
  );
const network = (code: string) =>
  new TRPCClientError('fetch failed', {
    cause: Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error(code), { code }),
    }),
  });

describe('classifyTRPCError', () => {
  it('retries 5xx that share JSON-RPC -32603 by their tRPC code, but not a server’s own failure', () => {
    for (const [code, status] of [
      ['BAD_GATEWAY', 502],
      ['SERVICE_UNAVAILABLE', 503],
      ['GATEWAY_TIMEOUT', 504],
    ] as const) {
      expect(classifyTRPCError(server(code, status))).toMatchObject({
        retry: true,
        countForCircuit: true,
      });
    }
    expect(classifyTRPCError(server('NOT_IMPLEMENTED', 501))).toMatchObject({ retry: false });
    // Core's rule, as gRPC's INTERNAL: not repeated, but counted, and another target may serve it.
    expect(classifyTRPCError(server('INTERNAL_SERVER_ERROR', 500))).toEqual({
      retry: false,
      failover: true,
      countForCircuit: true,
    });
    const bare = (status: number) => Object.assign(new Error('http'), { status });
    expect(classifyTRPCError(bare(500)).retry).toBe(false);
    expect(classifyTRPCError(bare(507)).retry).toBe(false);
    expect(classifyTRPCError(bare(502)).retry).toBe(true);
  });

  it('never retries 4xx domain errors, and they do not count for circuits', () => {
    for (const [code, status] of [
      ['BAD_REQUEST', 400],
      ['UNAUTHORIZED', 401],
      ['NOT_FOUND', 404],
      ['CONFLICT', 409],
      ['UNPROCESSABLE_CONTENT', 422],
    ] as const) {
      expect(classifyTRPCError(server(code, status))).toEqual({
        retry: false,
        failover: false,
        countForCircuit: false,
      });
    }
  });

  it('retries TIMEOUT; TOO_MANY_REQUESTS only with Retry-After, reported in ms', () => {
    expect(classifyTRPCError(server('TIMEOUT', 408)).retry).toBe(true);
    expect(classifyTRPCError(server('TOO_MANY_REQUESTS', 429)).retry).toBe(false);
    expect(classifyTRPCError(server('TOO_MANY_REQUESTS', 429, { 'retry-after': '2' }))).toEqual({
      retry: true,
      failover: true,
      countForCircuit: false,
      retryAfterMs: 2000,
    });
    const at = createTRPCErrorClassifier({ clock: () => Date.parse('2030-01-01T00:00:00Z') });
    const dated = server('SERVICE_UNAVAILABLE', 503, {
      'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT',
    });
    expect(at(dated).retryAfterMs).toBe(5000);
    // A Retry-After that is there but negative or not a number says "do not retry" (NaN pushback).
    for (const bad of ['-1', 'soon', '1e3']) {
      expect(
        classifyTRPCError(server('SERVICE_UNAVAILABLE', 503, { 'retry-after': bad })).retryAfterMs,
      ).toBeNaN();
    }
    expect(classifyTRPCError(server('SERVICE_UNAVAILABLE', 503)).retryAfterMs).toBe(undefined);
  });

  it('marks a connection never made as neverSent, and other network failures not', () => {
    expect(classifyTRPCError(network('ECONNREFUSED'))).toMatchObject({
      retry: true,
      neverSent: true,
    });
    expect(classifyTRPCError(network('ENOTFOUND')).neverSent).toBe(true);
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'ETIMEDOUT']) {
      expect(classifyTRPCError(network(code))).toMatchObject({ retry: true });
      expect(classifyTRPCError(network(code)).neverSent).toBeUndefined();
    }
    // Node's `fetch failed` without a refused connection below it may have been sent.
    expect(
      classifyTRPCError(new TRPCClientError('x', { cause: new TypeError('fetch failed') })),
    ).toMatchObject({ retry: true });
    expect(
      classifyTRPCError(new TRPCClientError('x', { cause: new TypeError('fetch failed') }))
        .neverSent,
    ).toBeUndefined();
    // A browser's fetch that got no response: the same rule as ECONNREFUSED.
    for (const message of [
      'Failed to fetch',
      'NetworkError when attempting to fetch resource.',
      'Load failed',
    ]) {
      const browser = new TRPCClientError(message, { cause: new TypeError(message) });
      expect(classifyTRPCError(browser)).toMatchObject({ retry: true, neverSent: true });
    }
    // Any other TypeError (a bug in a link, say) is not a network failure.
    expect(
      classifyTRPCError(new TRPCClientError('x', { cause: new TypeError('x is not a function') })),
    ).toMatchObject({ retry: false });
    expect(classifyTRPCError(new CircuitOpenError()).neverSent).toBe(true);
  });

  it('reads the status from meta.response when data is missing', () => {
    const e = new TRPCClientError('Unable to transform response from server', {
      meta: { response: new Response(null, { status: 503 }) },
    });
    expect(classifyTRPCError(e).retry).toBe(true);
  });

  it('retries network failures found in the cause chain', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ETIMEDOUT']) {
      expect(classifyTRPCError(network(code)).retry).toBe(true);
    }
    expect(
      classifyTRPCError(new TRPCClientError('terminated', { cause: new TypeError('terminated') }))
        .retry,
    ).toBe(true);
  });

  it('treats Breakwater refusals, cancellation and deadlines apart', () => {
    const wrap = (cause: Error) => new TRPCClientError(cause.message, { cause });
    expect(classifyTRPCError(wrap(new CircuitOpenError()))).toMatchObject({
      retry: false,
      failover: true,
      countForCircuit: false,
    });
    expect(classifyTRPCError(wrap(new OperationAbortedError()))).toMatchObject({
      retry: false,
      failover: false,
    });
    // Timed out: the attempt already waited, so the engine retries it without backoff.
    expect(classifyTRPCError(wrap(new DeadlineExceededError(10)))).toMatchObject({
      retry: true,
      countForCircuit: true,
      timedOut: true,
    });
    expect(classifyTRPCError(server('CLIENT_CLOSED_REQUEST', 499)).failover).toBe(false);
  });

  it('does not retry unknown errors and honours retryableCodes', () => {
    expect(classifyTRPCError(new TRPCClientError('weird')).retry).toBe(false);
    const only503 = createTRPCErrorClassifier({ retryableCodes: ['SERVICE_UNAVAILABLE'] });
    expect(only503(server('INTERNAL_SERVER_ERROR', 500)).retry).toBe(false);
    expect(only503(server('SERVICE_UNAVAILABLE', 503)).retry).toBe(true);
  });
});
