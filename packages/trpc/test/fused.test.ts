import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { createPool, isDeadlineExceededError, type Pool } from '@breakwater/core';
import { type Operation, TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  bulkheadLink,
  circuitBreakerLink,
  deadlineLink,
  type ResilienceLinkOptions,
  rateLimitLink,
  resilienceLink,
  retryLink,
} from '../src/index.js';
import { composeLinks } from '../src/internals/compose.js';
import { batchLink, chaos, clientOf, errorOf, slowCallInBatch } from './helpers.js';

// resilienceLink runs queries and mutations through one fused call object instead of
// five links. These tests hold it to the composed links' behaviour, event for event.

type Outcome = 'ok' | 'network' | 'badRequest' | 'hang' | 'syncNetwork';

const networkError = () =>
  new TRPCClientError<AnyRouter>('fetch failed', { cause: new TypeError('fetch failed') });
const badRequest = () =>
  new TRPCClientError<AnyRouter>('bad input', {
    result: {
      error: { code: -32600, message: 'bad input', data: { code: 'BAD_REQUEST', httpStatus: 400 } },
    },
  } as never);

/** A terminating link answering attempt n (counted over the whole run) as `script[n]` after 5 ms. */
function scriptedTerminal(script: readonly Outcome[], log: string[]): TRPCLink<AnyRouter> {
  let n = 0;
  return () =>
    ({ op }) =>
      observable((observer) => {
        const outcome = script[n++] ?? 'ok';
        log.push(`send ${op.id} ${outcome}`);
        if (outcome === 'syncNetwork') {
          observer.error(networkError());
          return () => log.push(`teardown ${op.id}`);
        }
        const timer =
          outcome === 'hang'
            ? undefined
            : setTimeout(() => {
                if (outcome === 'ok') {
                  observer.next({ result: { type: 'data', data: op.input } });
                  observer.complete();
                } else observer.error(outcome === 'network' ? networkError() : badRequest());
              }, 5);
        return () => {
          clearTimeout(timer);
          log.push(`teardown ${op.id}`);
        };
      });
}

function describeError(error: unknown): string {
  const e = error as Error & { cause?: Error };
  return `${e.name}: ${e.message} (cause ${e.cause?.name ?? '-'})`;
}

interface Scenario {
  script: Outcome[];
  calls: { type: 'query' | 'mutation'; idempotent: boolean | undefined; abortAfterMs?: number }[];
  bulkhead: boolean;
  rateLimit: number | undefined;
  timeoutMs: number | undefined;
  attempts: number | undefined;
  failureThreshold: number | undefined;
}

/** The same options twice: as resilienceLink's, and as the five links it composes. */
function optionsOf(s: Scenario, pool: Pool, log: string[]): ResilienceLinkOptions {
  return {
    ...(s.bulkhead ? { bulkhead: { pool } } : {}),
    ...(s.rateLimit === undefined
      ? {}
      : { rateLimit: { bucket: { capacity: s.rateLimit, refillPerSecond: 0.001 } } }),
    ...(s.timeoutMs === undefined ? {} : { timeout: { timeoutMs: s.timeoutMs } }),
    ...(s.attempts === undefined
      ? {}
      : {
          retry: {
            attempts: s.attempts,
            backoff: { baseDelayMs: 10, strategy: 'exponential' as const, jitter: 'none' as const },
          },
        }),
    ...(s.failureThreshold === undefined
      ? {}
      : {
          circuit: {
            circuit: { failureThreshold: s.failureThreshold, openDurationMs: 50 },
            onStateChange: (e) => log.push(`circuit ${e.from} -> ${e.to}`),
          },
        }),
  };
}

function composedOf(o: ResilienceLinkOptions): TRPCLink<AnyRouter> {
  const links: TRPCLink<AnyRouter>[] = [];
  if (o.bulkhead) links.push(bulkheadLink(o.bulkhead));
  if (o.rateLimit) links.push(rateLimitLink(o.rateLimit));
  if (o.timeout) links.push(deadlineLink(o.timeout));
  if (o.retry) links.push(retryLink(o.retry));
  if (o.circuit) links.push(circuitBreakerLink(o.circuit));
  return composeLinks(links);
}

/** Runs the calls one after another on fake timers; returns what caller and server saw. */
async function run(s: Scenario, fused: boolean): Promise<string[]> {
  const log: string[] = [];
  const pool = createPool({ concurrency: 4 });
  const options = optionsOf(s, pool, log);
  const link = (fused ? resilienceLink(options) : composedOf(options))({} as never);
  const terminal = scriptedTerminal(s.script, log)({} as never);
  let id = 0;
  for (const call of s.calls) {
    id++;
    const ac = new AbortController();
    const op = {
      id,
      type: call.type,
      path: 'echo',
      input: `in${id}`,
      context: call.idempotent === undefined ? {} : { idempotent: call.idempotent },
      signal: ac.signal,
    } as Operation;
    let ends = 0;
    const subscription = link({
      op,
      next: (o) => terminal({ op: o, next: () => observable(() => undefined) }),
    }).subscribe({
      next: (v) => log.push(`next ${id} ${JSON.stringify(v.result)}`),
      error: (e) => {
        ends++;
        log.push(`error ${id} ${describeError(e)}`);
      },
      complete: () => {
        ends++;
        log.push(`complete ${id}`);
      },
    });
    if (call.abortAfterMs !== undefined) {
      setTimeout(() => {
        log.push(`abort ${id}`);
        ac.abort();
      }, call.abortAfterMs);
    }
    await vi.advanceTimersByTimeAsync(500);
    // A call still hanging (no deadline) is left by its caller.
    subscription.unsubscribe();
    expect(ends).toBeLessThanOrEqual(1);
    // Nothing left behind: no timer, no slot.
    log.push(`after ${id}: timers ${vi.getTimerCount()}, slots ${pool.stats().active}`);
    // Let the circuit's open period pass between some calls.
    await vi.advanceTimersByTimeAsync(id * 20);
  }
  return log;
}

const outcome = fc.constantFrom<Outcome>('ok', 'network', 'badRequest', 'hang', 'syncNetwork');
const scenario: fc.Arbitrary<Scenario> = fc.record({
  script: fc.array(outcome, { maxLength: 8 }),
  calls: fc.array(
    fc.record(
      {
        type: fc.constantFrom<'query' | 'mutation'>('query', 'query', 'mutation'),
        idempotent: fc.constantFrom(undefined, true, false),
        abortAfterMs: fc.integer({ min: 0, max: 60 }),
      },
      { requiredKeys: ['type', 'idempotent'] },
    ),
    { minLength: 1, maxLength: 4 },
  ),
  bulkhead: fc.boolean(),
  rateLimit: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  timeoutMs: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
  attempts: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  failureThreshold: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
});

describe('resilienceLink fused query path', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('behaves exactly like the composed links, leaving no timer or slot behind', async () => {
    vi.useFakeTimers();
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const fused = await run(s, true);
        const composed = await run(s, false);
        expect(fused).toEqual(composed);
        for (const line of fused.filter((l) => l.startsWith('after'))) {
          expect(line).toMatch(/timers 0, slots 0$/);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('retries a failing query, then answers: one slot, one token, the attempts the script asked for', async () => {
    vi.useFakeTimers();
    const s: Scenario = {
      script: ['network', 'syncNetwork', 'ok'],
      calls: [{ type: 'query', idempotent: undefined }],
      bulkhead: true,
      rateLimit: 1,
      timeoutMs: 60,
      attempts: 3,
      failureThreshold: 3,
    };
    const log = await run(s, true);
    expect(log.filter((l) => l.startsWith('send'))).toEqual([
      'send 1 network',
      'send 1 syncNetwork',
      'send 1 ok',
    ]);
    expect(log).toContain('next 1 {"type":"data","data":"in1"}');
    expect(log).toContain('complete 1');
    expect(log.at(-1)).toBe('after 1: timers 0, slots 0');
  });

  it('falls back to the composed links when the bulkhead must queue', async () => {
    const pool = createPool({ concurrency: 1, maxQueue: 1 });
    const log: string[] = [];
    const link = resilienceLink({ bulkhead: { pool }, retry: {} })({} as never);
    const terminal = scriptedTerminal(['ok', 'ok'], log)({} as never);
    const call = (id: number) =>
      new Promise<string>((resolve, reject) => {
        link({
          op: {
            id,
            type: 'query',
            path: 'echo',
            input: id,
            context: {},
            signal: null,
          } as Operation,
          next: (o) => terminal({ op: o, next: () => observable(() => undefined) }),
        }).subscribe({ next: (v) => resolve(JSON.stringify(v.result)), error: reject });
      });
    const first = call(1);
    const second = call(2);
    expect(pool.stats()).toMatchObject({ active: 1, queued: 1 });
    await expect(first).resolves.toBe('{"type":"data","data":1}');
    await expect(second).resolves.toBe('{"type":"data","data":2}');
    expect(log.filter((l) => l.startsWith('send'))).toEqual(['send 1 ok', 'send 2 ok']);
  });
});

describe('resilienceLink fused query path against a chaos tRPC server', () => {
  const fullStack = () =>
    resilienceLink({
      bulkhead: { pool: { concurrency: 8 } },
      rateLimit: { bucket: { capacity: 100, refillPerSecond: 100 } },
      timeout: { procedures: { slow: 100 }, timeoutMs: 2000 },
      retry: { attempts: 4, backoff: { baseDelayMs: 5, strategy: 'exponential', maxDelayMs: 20 } },
      circuit: { circuit: { failureThreshold: 10, openDurationMs: 60_000 } },
    });

  it('retries a query failing with 503 until attempt k; the server counted k', async () => {
    const server = await chaos({ faults: { failFirst: 3 } });
    const client = clientOf([fullStack(), batchLink(server.url)]);
    const result = await client.echo.query('k', { context: { callId: 'f1' } });
    expect(result).toEqual({ value: 'k', server: 'trpc' });
    expect(server.stats().attempts.f1).toBe(4);
    expect(server.stats().faults.error).toBe(3);
  });

  it('sends a mutation once and a BAD_REQUEST once', async () => {
    const server = await chaos({ faults: { failFirst: 1 } });
    const client = clientOf([fullStack(), batchLink(server.url)]);
    const error = await errorOf(client.counter.increment.mutate({ by: 1 }));
    expect((error as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('SERVICE_UNAVAILABLE');
    expect(server.stats().procedures['counter.increment']).toBe(1);
    const healthy = await chaos();
    const bad = await errorOf(
      clientOf([fullStack(), batchLink(healthy.url)]).fail.query({ code: 'BAD_REQUEST' }),
    );
    expect((bad as TRPCClientError<ChaosTrpcRouter>).data?.code).toBe('BAD_REQUEST');
    expect(healthy.stats().procedures.fail).toBe(1);
  });

  it('rejects the one slow call of a batch on time while the others resolve', async () => {
    const { values, error, slowSettledAt, server } = await slowCallInBatch((url) => [
      fullStack(),
      batchLink(url),
    ]);
    expect(values).toEqual(['a', 'b']);
    expect(slowSettledAt).toBeGreaterThanOrEqual(95);
    expect(slowSettledAt).toBeLessThan(400);
    expect(isDeadlineExceededError((error as Error).cause)).toBe(true);
    expect(server.stats().batchSizes).toEqual([3]);
  });
});
