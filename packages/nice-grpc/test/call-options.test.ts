import { isDeadlineExceededError } from '@breakwater/core';
import { ClientError, Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { resilienceMiddleware, retryMiddleware } from '../src/index.js';
import { callId, chaosServer, echoClient, rejection } from './helpers.js';

const fast = { backoff: { baseDelayMs: 5, jitter: 'none' as const } };

describe('per-call options are checked where they arrive', () => {
  it('attempts: 20 rejects the call with an INVALID_ARGUMENT ClientError naming the option, unsent', async () => {
    const server = await chaosServer();
    for (const middleware of [resilienceMiddleware(), retryMiddleware(fast)]) {
      const client = echoClient(server.address, middleware);
      const error = await rejection(client.Unary({}, { ...callId('many'), attempts: 20 }));
      expect(error).toBeInstanceOf(ClientError);
      expect(error.code).toBe(Status.INVALID_ARGUMENT);
      expect(error.details).toBe('call option attempts must be <= 10, got 20');
      expect(error.cause).toBeInstanceOf(RangeError);
    }
    expect(server.attempts('many')).toBe(0);
  });

  it('a misspelt per-call key (atempts: 1) rejects the call with INVALID_ARGUMENT naming it with a did-you-mean, unsent', async () => {
    const server = await chaosServer();
    const client = echoClient(server.address, resilienceMiddleware());
    const error = await rejection(
      client.Unary({}, { ...callId('typo'), atempts: 1 } as { attempts?: number }),
    );
    expect(error).toBeInstanceOf(ClientError);
    expect(error.code).toBe(Status.INVALID_ARGUMENT);
    expect(error.details).toBe('call option unknown option `atempts` — did you mean `attempts`?');
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(server.attempts('typo')).toBe(0);
    // Another middleware's key, far from ours, passes.
    const other = await client.Unary({}, { ...callId('other'), loggingTag: 'x' } as object);
    expect(other).toBeDefined();
    expect(server.attempts('other')).toBe(1);
  });

  it('a deadline already passed says so (not "Deadline of -5 ms exceeded"); NaN is INVALID_ARGUMENT', async () => {
    const server = await chaosServer();
    const client = echoClient(server.address, resilienceMiddleware());
    const past = await rejection(client.Unary({}, { ...callId('past'), deadline: -5 }));
    expect(past.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(past.details).toBe('Deadline -5 ms had already passed when the call started: not sent');
    const nan = await rejection(client.Unary({}, { ...callId('nan'), deadline: Number.NaN }));
    expect(nan.code).toBe(Status.INVALID_ARGUMENT);
    expect(nan.details).toBe(
      'call option deadline must be a Date or a number of ms from now, got NaN',
    );
    expect(server.total()).toBe(0);
  });

  it('names the deadline that ended the call: the attempt’s 120 ms, or the call’s 300 ms', async () => {
    const server = await chaosServer({ faults: [{ hang: true }] });
    const client = echoClient(
      server.address,
      resilienceMiddleware({
        timeoutMs: 300,
        attemptTimeoutMs: 120,
        retry: { attempts: 2, ...fast },
      }),
    );
    const error = await rejection(client.Unary({}, callId('hung')));
    expect(error.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(isDeadlineExceededError(error.cause)).toBe(true);
    // Two attempts (0 and ~125 ms) each ran out their 120 ms; the call's 300 ms had not passed.
    expect(error.details).toBe(
      "Attempt deadline of 120 ms exceeded (attemptTimeoutMs; the call's own deadline had not passed)",
    );
    expect(server.attempts('hung')).toBe(2);

    const whole = echoClient(
      server.address,
      resilienceMiddleware({ timeoutMs: 150, retry: false }),
    );
    const late = await rejection(whole.Unary({}, callId('whole')));
    expect(late.details).toBe('Call deadline of 150 ms exceeded');
  });
});
