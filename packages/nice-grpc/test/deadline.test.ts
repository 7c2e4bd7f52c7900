import { isDeadlineExceededError } from '@breakwater/core';
import { ClientError, composeClientMiddleware, Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { deadlineMiddleware, resilienceMiddleware, retryMiddleware } from '../src/index.js';
import { callId, chaosServer, echoClient, rejection, sleep } from './helpers.js';

const fast = { baseDelayMs: 20, jitter: 'none' as const };

describe('deadlineMiddleware against a chaos server', () => {
  it('sends the deadline: the server observes it on every attempt, shrinking, never past the caller’s', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 2 }],
    });
    const client = echoClient(
      server.address,
      // No attempt deadline: each attempt gets the call's (a derived one would cut it once latency is known).
      resilienceMiddleware({ timeoutMs: 5_000, attemptTimeoutMs: false, retry: { backoff: fast } }),
    );
    // A cold channel connects after the header is written; warm it so the bound is the steady-state one.
    await client.UnaryUnsafe({}).catch(() => {});
    const callerDeadline = Date.now() + 1_000;
    await client.Unary({}, { ...callId('d'), deadline: new Date(callerDeadline) });
    const seen = server.observed.filter((o) => o.callId === 'd');
    expect(seen).toHaveLength(3);
    const remaining = seen.map((o) => o.deadlineRemainingMs as number);
    for (const o of seen) {
      expect(o.deadline).toBeDefined();
      // gRPC sends a relative timeout (whole ms, rounded up), so the server's absolute deadline is
      // the caller's plus transit and scheduling time — tens of ms on this loaded 2-core machine.
      expect(o.deadline as number).toBeLessThanOrEqual(callerDeadline + 50);
      expect(o.deadline as number).toBeGreaterThan(callerDeadline - 50);
    }
    expect(remaining[0]).toBeLessThanOrEqual(1_000);
    expect(remaining[1]).toBeLessThan(remaining[0] as number);
    expect(remaining[2]).toBeLessThan(remaining[1] as number);
  });

  it('the middleware budget wins over a later caller deadline, and vice versa', async () => {
    const server = await chaosServer();
    const client = echoClient(server.address, deadlineMiddleware({ timeoutMs: 300 }));
    await client.Unary({}, { ...callId('budget'), deadline: 10_000 });
    await client.Unary({}, { ...callId('caller'), deadline: 100 });
    const [budget, caller] = server.observed;
    expect(budget?.deadlineRemainingMs).toBeLessThanOrEqual(300);
    expect(budget?.deadlineRemainingMs).toBeGreaterThan(200);
    expect(caller?.deadlineRemainingMs).toBeLessThanOrEqual(100);
  });

  // resilienceMiddleware runs the same deadline stage, outermost, with the other parts below it.
  const withDeadline = {
    deadlineMiddleware: (timeoutMs: number) => deadlineMiddleware({ timeoutMs }),
    resilienceMiddleware: (timeoutMs: number) =>
      resilienceMiddleware({
        timeoutMs,
        attemptTimeoutMs: false,
        concurrency: { limit: 10 },
        retry: { backoff: fast },
      }),
  };

  it.each(Object.keys(withDeadline) as (keyof typeof withDeadline)[])(
    '%s: a slow server yields DEADLINE_EXCEEDED on time, with the core error as cause',
    async (kind) => {
      const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 3_000 } }] });
      const client = echoClient(server.address, withDeadline[kind](200));
      const started = performance.now();
      const error = await rejection(client.Unary({}, callId('slow')));
      const took = performance.now() - started;
      expect(error).toBeInstanceOf(ClientError);
      expect(error.code).toBe(Status.DEADLINE_EXCEEDED);
      expect(isDeadlineExceededError(error.cause)).toBe(true);
      expect(took).toBeGreaterThanOrEqual(190);
      // Far below the server's 3 s: the deadline cut the call (a tight bound flakes on a loaded 2-core box).
      expect(took).toBeLessThan(2_500);
      expect(server.observed[0]?.deadlineRemainingMs).toBeLessThanOrEqual(200);
    },
  );

  // A sleep that never ends by itself: our timer never fires, so the server's deadline (sent as
  // grpc-timeout) always wins the race that a loaded machine decides either way.
  const neverFires = (_ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) =>
      signal?.addEventListener('abort', () => resolve(), { once: true }),
    );
  const serverFirst = {
    deadlineMiddleware: (timeoutMs: number) => deadlineMiddleware({ timeoutMs, sleep: neverFires }),
    resilienceMiddleware: (timeoutMs: number) =>
      resilienceMiddleware({
        timeoutMs,
        attemptTimeoutMs: false,
        sleep: neverFires,
        concurrency: { limit: 10 },
        retry: { backoff: fast },
      }),
  };

  it.each(Object.keys(serverFirst) as (keyof typeof serverFirst)[])(
    '%s: when the server’s deadline fires first the error has the same shape (core cause)',
    async (kind) => {
      const server = await chaosServer({ faults: [{ latency: { kind: 'fixed', ms: 3_000 } }] });
      const client = echoClient(server.address, serverFirst[kind](150));
      const error = await rejection(client.Unary({}, callId('server-first')));
      expect(error).toBeInstanceOf(ClientError);
      expect(error.code).toBe(Status.DEADLINE_EXCEEDED);
      expect(isDeadlineExceededError(error.cause)).toBe(true);
      // The server's own status is kept underneath.
      const serverError = (error.cause as Error).cause as ClientError;
      expect(serverError).toBeInstanceOf(ClientError);
      expect(serverError.code).toBe(Status.DEADLINE_EXCEEDED);
      expect(server.observed[0]?.deadlineRemainingMs).toBeLessThanOrEqual(150);
    },
  );

  it('a server stream whose server deadline fires first has the same shape too', async () => {
    const server = await chaosServer({
      faults: [{ methods: ['ServerStream'], latency: { kind: 'fixed', ms: 2_000 } }],
    });
    const client = echoClient(
      server.address,
      deadlineMiddleware({ timeoutMs: 150, sleep: neverFires }),
    );
    const error = await rejection(
      (async () => {
        for await (const _ of client.ServerStream({ count: 2 }, callId('stream-first'))) {
          // drain
        }
      })(),
    );
    expect(error.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(isDeadlineExceededError(error.cause)).toBe(true);
  });

  it('a DEADLINE_EXCEEDED on a call without a Breakwater deadline is passed on untouched', async () => {
    const server = await chaosServer({ faults: [{ status: Status.DEADLINE_EXCEEDED }] });
    const client = echoClient(
      server.address,
      resilienceMiddleware({ timeoutMs: false, attemptTimeoutMs: false, retry: { backoff: fast } }),
    );
    const error = await rejection(client.Unary({}, callId('none')));
    expect(error.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(error.cause).toBeUndefined();
  });

  it('an expired deadline never reaches the server', async () => {
    const server = await chaosServer();
    const client = echoClient(server.address, deadlineMiddleware());
    const error = await rejection(client.Unary({}, { deadline: new Date(Date.now() - 1) }));
    expect(error.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(server.total()).toBe(0);
  });

  it('does not retry past the deadline: a backoff that would end after it ends the call', async () => {
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        timeoutMs: 150,
        retry: { backoff: { baseDelayMs: 100, jitter: 'none' }, attempts: 5 },
      }),
    );
    await client.UnaryUnsafe({}, { retry: false }).catch(() => {});
    const error = await rejection(client.Unary({}, callId('late')));
    expect(error.code).toBe(Status.UNAVAILABLE);
    // Attempt 1, a 100 ms wait, attempt 2; the next wait (200 ms) would pass the deadline.
    expect(server.attempts('late')).toBe(2);
  });

  it('a per-attempt timeout retries a hung attempt; the server saw the shorter deadline first', async () => {
    const server = await chaosServer({ faults: [{ hang: true, firstAttempts: 1 }] });
    const client = echoClient(
      server.address,
      composeClientMiddleware(
        retryMiddleware({ attemptTimeoutMs: 150, backoff: fast }),
        deadlineMiddleware({ timeoutMs: 3_000 }),
      ),
    );
    const reply = await client.Unary({}, callId('hung'));
    expect(reply.attempt).toBe(2);
    const [first, second] = server.observed;
    expect(first?.deadlineRemainingMs).toBeLessThanOrEqual(150);
    expect(first?.outcome).toBe('CANCELLED');
    expect(second?.deadlineRemainingMs).toBeLessThanOrEqual(150);
    expect(second?.outcome).toBe('OK');
  });

  it('bounds a server stream: DEADLINE_EXCEEDED mid-stream, deadline seen by the server', async () => {
    const server = await chaosServer({
      faults: [{ methods: ['ServerStream'], latency: { kind: 'fixed', ms: 2_000 } }],
    });
    const client = echoClient(server.address, deadlineMiddleware({ timeoutMs: 150 }));
    const error = await rejection(
      (async () => {
        for await (const _ of client.ServerStream({ count: 2 }, callId('stream'))) {
          // drain
        }
      })(),
    );
    expect(error.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(server.observed[0]?.deadlineRemainingMs).toBeLessThanOrEqual(150);
  });

  it.each(Object.keys(withDeadline) as (keyof typeof withDeadline)[])(
    '%s: a caller abort stays an AbortError',
    async (kind) => {
      const server = await chaosServer({ faults: [{ hang: true }] });
      const client = echoClient(server.address, withDeadline[kind](5_000));
      const controller = new AbortController();
      const pending = rejection(client.Unary({}, { signal: controller.signal }));
      // Abort once the server holds the call (a cold channel may take a while to connect).
      while (server.total() === 0) await sleep(5);
      const started = performance.now();
      controller.abort(new Error('caller gave up'));
      const error = await pending;
      expect(error.name).toBe('AbortError');
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(server.total()).toBe(1);
    },
  );

  it('a retry that cannot start before the deadline is skipped: the caller gets the last UNAVAILABLE', async () => {
    // The server asks for 300 ms; the call has 200 ms: waiting could only end in DEADLINE_EXCEEDED.
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE, pushbackMs: 300 }] });
    const client = echoClient(server.address, resilienceMiddleware({ timeoutMs: 200 }));
    const error = await rejection(client.Unary({}, callId('skip')));
    expect(error.code).toBe(Status.UNAVAILABLE);
    expect(error.cause).toBeUndefined();
    expect(server.attempts('skip')).toBe(1);
  });

  it('a server DEADLINE_EXCEEDED under attemptTimeoutMs, before the call deadline, is retried', async () => {
    // Our own attempt timer never fires: the server's, from the grpc-timeout we sent, does.
    const server = await chaosServer({ faults: [{ hang: true, firstAttempts: 1 }] });
    const codes: Array<number | undefined> = [];
    const client = echoClient(
      server.address,
      composeClientMiddleware(
        retryMiddleware({
          attemptTimeoutMs: 150,
          backoff: fast,
          sleep: neverFiresUnlessShort,
          onRetry: (e) => codes.push(e.code),
        }),
        deadlineMiddleware({ timeoutMs: 5_000 }),
      ),
    );
    const reply = await client.Unary({}, callId('server-dl'));
    expect(reply.attempt).toBe(2);
    // The first attempt ended with the server's status (its deadline timer, which it records as a cancel).
    expect(codes).toEqual([Status.DEADLINE_EXCEEDED]);
    const [first, second] = server.observed;
    expect(first?.outcome).toBe('CANCELLED');
    expect(first?.deadlineRemainingMs).toBeLessThanOrEqual(150);
    expect(second?.outcome).toBe('OK');
  });
});

/** Waits out short delays (the 20 ms backoff) for real; never ends the long ones (attempt timers). */
function neverFiresUnlessShort(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms < 100) setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}
