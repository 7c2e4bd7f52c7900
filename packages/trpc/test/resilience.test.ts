import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { isDeadlineExceededError } from '@breakwater/core';
import type { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { hedgeLink, resilienceLink, retryLink, type TRPCRetryEvent } from '../src/index.js';
import { batchLink, chaos, clientOf, errorOf } from './helpers.js';

const fast = { baseDelayMs: 5, strategy: 'exponential' as const, maxDelayMs: 20 };
const codeOf = (e: unknown) => (e as TRPCClientError<ChaosTrpcRouter>).data?.code;

async function pushback(retryAfterSeconds: number) {
  const server = await chaos({
    faults: { failFirst: 1, error: { type: 'status', status: 503, retryAfterSeconds } },
  });
  const client = clientOf([retryLink({ backoff: fast }), batchLink(server.url)]);
  return { server, client };
}

describe('Retry-After pushback (replaces the backoff; invalid stops)', () => {
  it('waits the 1 s the server asked for, not the 5 ms backoff', async () => {
    // Delta-seconds are whole seconds (RFC 9110); a fraction stops the retries.
    const { server, client } = await pushback(1);
    const started = performance.now();
    await client.echo.query('r', { context: { callId: 'p1' } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(995);
    expect(server.stats().attempts.p1).toBe(2);
  });

  it('does not retry on a negative Retry-After', async () => {
    const { server, client } = await pushback(-1);
    const error = await errorOf(client.echo.query('r', { context: { callId: 'neg' } }));
    expect(codeOf(error)).toBe('SERVICE_UNAVAILABLE');
    expect(server.stats().attempts.neg).toBe(1);
  });

  it('does not retry on a non-numeric Retry-After', async () => {
    const { server, client } = await pushback(Number.NaN);
    const error = await errorOf(client.echo.query('r', { context: { callId: 'nan' } }));
    expect(codeOf(error)).toBe('SERVICE_UNAVAILABLE');
    expect(server.stats().attempts.nan).toBe(1);
  });

  it('skips a retry that cannot start before the deadline: the caller gets the 503 at once', async () => {
    const server = await chaos({
      faults: { failFirst: 1, error: { type: 'status', status: 503, retryAfterSeconds: 1 } },
    });
    const client = clientOf([
      resilienceLink({ timeoutMs: 500, retry: { backoff: fast } }),
      batchLink(server.url),
    ]);
    const error = await errorOf(client.echo.query('d', { context: { callId: 'dl' } }));
    expect(codeOf(error)).toBe('SERVICE_UNAVAILABLE');
    expect(isDeadlineExceededError((error as Error).cause)).toBe(false);
    expect(server.stats().attempts.dl).toBe(1);
  });
});

describe('resilienceLink', () => {
  it('with no options does not repeat a procedure that fails with INTERNAL_SERVER_ERROR', async () => {
    const server = await chaos();
    const client = clientOf([resilienceLink(), batchLink(server.url)]);
    for (let i = 0; i < 3; i++) {
      const error = await errorOf(client.fail.query({ code: 'INTERNAL_SERVER_ERROR' }));
      expect(codeOf(error)).toBe('INTERNAL_SERVER_ERROR');
    }
    // Once per call, not three times: a buggy procedure gets no extra load from its clients.
    expect(server.stats().procedures.fail).toBe(3);
  });

  it('with no options runs the standard stack: retries a query, not a mutation', async () => {
    const server = await chaos({ faults: { failFirst: 1 } });
    const client = clientOf([resilienceLink(), batchLink(server.url)]);
    await expect(client.echo.query('q', { context: { callId: 'q' } })).resolves.toMatchObject({
      value: 'q',
    });
    expect(server.stats().attempts.q).toBe(2);
    const error = await errorOf(
      client.counter.increment.mutate({ by: 1 }, { context: { callId: 'm' } }),
    );
    expect(codeOf(error)).toBe('SERVICE_UNAVAILABLE');
    expect(server.stats().attempts.m).toBe(1);
  });

  it('retries a mutation the user marked idempotent, and not with retry: false', async () => {
    const server = await chaos({ faults: { failFirst: 1 } });
    const client = clientOf([
      resilienceLink({
        retry: { backoff: fast },
        idempotent: (op) => op.type === 'query' || op.path === 'counter.increment',
      }),
      batchLink(server.url),
    ]);
    await client.counter.increment.mutate({ by: 1 }, { context: { callId: 'm1' } });
    expect(server.stats().attempts.m1).toBe(2);
    const off = clientOf([resilienceLink({ retry: false }), batchLink(server.url)]);
    server.setFaults({ failFirst: 1 });
    await errorOf(off.echo.query('x', { context: { callId: 'q1' } }));
    expect(server.stats().attempts.q1).toBe(1);
  });

  it('retries an attempt that hung past attemptTimeoutMs', async () => {
    const server = await chaos({ faults: { hangRate: 1 } });
    const client = clientOf([
      resilienceLink({ attemptTimeoutMs: 100, retry: { backoff: fast } }),
      batchLink(server.url),
    ]);
    const pending = client.echo.query('h', { context: { callId: 'h' } });
    while (server.stats().requests === 0) await new Promise((r) => setTimeout(r, 2));
    server.setFaults({});
    await expect(pending).resolves.toMatchObject({ value: 'h' });
    expect(server.stats().attempts.h).toBe(2);
  });

  it('attemptTimeoutMs left out: once the procedure answered 20 times, a hung attempt is cut at 3 x its p99 (>= 100 ms) and retried within the 1 s deadline', async () => {
    const server = await chaos();
    const client = clientOf([resilienceLink({ timeoutMs: 1_000 }), batchLink(server.url)]);
    for (let i = 0; i < 20; i++) await client.echo.query('warm');
    // Each call's first attempt now hangs; the retry answers.
    server.setFaults({ steps: [{ hang: true }] });
    for (const id of ['h1', 'h2', 'h3']) {
      const started = performance.now();
      await expect(client.echo.query(id, { context: { callId: id } })).resolves.toMatchObject({
        value: id,
      });
      // Cut at the 100 ms floor (the warm-up answered in a few ms), retried at once.
      expect(performance.now() - started).toBeLessThan(600);
      expect(server.stats().attempts[id]).toBe(2);
    }
  });

  it('tells onRetry the failed attempt with no payload; a throwing listener breaks nothing', async () => {
    const server = await chaos({ faults: { failFirst: 2 } });
    const events: TRPCRetryEvent[] = [];
    const client = clientOf([
      resilienceLink({
        retry: {
          backoff: fast,
          onRetry: (e) => {
            events.push(e);
            throw new Error('listener bug');
          },
        },
      }),
      batchLink(server.url),
    ]);
    await expect(client.echo.query('e', { context: { callId: 'e' } })).resolves.toMatchObject({
      value: 'e',
    });
    expect(server.stats().attempts.e).toBe(3);
    expect(events.map((e) => e.attempt)).toEqual([1, 2]);
    expect(events[0]).toEqual({
      path: 'echo',
      type: 'query',
      attempt: 1,
      delayMs: expect.any(Number),
      errorName: 'TRPCClientError',
      code: 'SERVICE_UNAVAILABLE',
    });
  });

  it('deposits in the budget once per call, and withdraws once per retry', async () => {
    const server = await chaos({ faults: { failFirst: 2 } });
    let deposits = 0;
    let withdrawals = 0;
    const budget = {
      recordRequest: () => {
        deposits++;
      },
      tryRetry: () => {
        withdrawals++;
        return true;
      },
    };
    const client = clientOf([
      resilienceLink({ retry: { backoff: fast }, budget: budget as never }),
      batchLink(server.url),
    ]);
    await client.echo.query('1');
    await client.echo.query('2');
    expect(deposits).toBe(2);
    // Each call failed twice (failFirst counts per call): one withdrawal per retry.
    expect(server.stats().requests).toBe(6);
    expect(withdrawals).toBe(4);
  });

  it('names the full option path of a bad value, and refuses the old keys', () => {
    expect(() => resilienceLink({ retry: { attempts: 11 } })).toThrow(
      /resilienceLink: retry\.attempts/,
    );
    expect(() => resilienceLink({ retryMutations: true } as never)).toThrow(
      /resilienceLink: unknown option `retryMutations`/,
    );
    expect(() => resilienceLink({ idempotent: 'yes' as never })).toThrow(
      /resilienceLink: idempotent must be a boolean or a function/,
    );
    expect(() => retryLink({ attempts: 0 })).toThrow(/retryLink: attempts/);
    expect(() => hedgeLink({ delayMs: -1 })).toThrow(/hedgeLink: delayMs/);
  });
});

describe('hedgeLink', () => {
  it('hedges within attempts, the first answer wins, and a domain error is the answer', async () => {
    const server = await chaos({ faults: { hangRate: 1 } });
    const client = clientOf([hedgeLink({ delayMs: 50, attempts: 3 }), batchLink(server.url)]);
    const pending = client.echo.query('h', { context: { callId: 'h3' } });
    while (server.stats().requests < 2) await new Promise((r) => setTimeout(r, 2));
    server.setFaults({});
    await expect(pending).resolves.toMatchObject({ value: 'h' });
    expect(server.stats().attempts.h3).toBe(3);
    const bad = await errorOf(client.fail.query({ code: 'BAD_REQUEST' }));
    expect(codeOf(bad)).toBe('BAD_REQUEST');
    expect(server.stats().procedures.fail).toBe(1);
    expect(isDeadlineExceededError(undefined)).toBe(false);
  });
});

describe('onWarning', () => {
  it('says once, at construction, that retries with idempotent: false repeat only requests that never left', () => {
    const codes: string[] = [];
    const onWarning = (w: { code: string }) => codes.push(w.code);
    resilienceLink({ idempotent: false, onWarning });
    resilienceLink({ onWarning });
    resilienceLink({ idempotent: false, retry: false, onWarning });
    retryLink({ idempotent: false, onWarning });
    expect(codes).toEqual(['no-idempotent-methods', 'no-idempotent-methods']);
    expect(() =>
      resilienceLink({
        idempotent: false,
        onWarning: () => {
          throw new Error('listener bug');
        },
      }),
    ).not.toThrow();
    expect(() => resilienceLink({ onWarning: 'log' as never })).toThrow(
      /resilienceLink: onWarning must be a function/,
    );
  });
});
