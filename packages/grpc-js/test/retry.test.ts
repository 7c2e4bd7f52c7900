import {
  createEchoClient,
  ECHO_METHODS,
  echoServerStream,
  echoUnary,
  loadEchoPackageDefinition,
} from '@breakwater/chaos';
import type { BackoffOptions } from '@breakwater/core';
import { type Interceptor, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  disableGrpcRetries,
  idempotentMethods,
  type MethodSelector,
  PREVIOUS_ATTEMPTS_HEADER,
  resilienceInterceptor,
} from '../src/index.js';
import { closedPort, echoSetup, only } from './helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());
const fast = { baseDelayMs: 5, strategy: 'exponential', maxDelayMs: 20, jitter: 'none' } as const;

/** Only retries, for `idempotent` (the Echo proto's safe methods) unless given. */
function retryInterceptor(
  options: {
    idempotent?: MethodSelector;
    attempts?: number;
    backoff?: BackoffOptions;
    attemptTimeoutMs?: number;
  } = {},
) {
  const { idempotent: safe = idempotent, attemptTimeoutMs, ...retry } = options;
  return only({
    idempotent: safe,
    retry,
    ...(attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs }),
  });
}

describe('resilienceInterceptor retries against a real server', () => {
  it('reads idempotency from the proto options', () => {
    expect(idempotent.has(ECHO_METHODS.unary)).toBe(true);
    expect(idempotent.has(ECHO_METHODS.serverStream)).toBe(true);
    expect(idempotent.has(ECHO_METHODS.unaryUnsafe)).toBe(false);
  });

  it('retries UNAVAILABLE until attempt k succeeds; the server counts exactly k, re-sent with previous attempts', async () => {
    const { server, client } = await echoSetup(
      [retryInterceptor({ idempotent, attempts: 5, backoff: fast })],
      {
        faults: [{ firstAttempts: 2, status: status.UNAVAILABLE }],
      },
    );
    const outcome = await echoUnary(client, { message: 'payload' }, { callId: 'k3' });
    expect(outcome.value).toMatchObject({ message: 'payload', attempt: 3 });
    expect(server.attempts('k3')).toBe(3);
    expect(server.observed.map((o) => o.previousAttempts)).toEqual([undefined, 1, 2]);
    expect(PREVIOUS_ATTEMPTS_HEADER).toBe('grpc-previous-rpc-attempts');
  });

  it('gives up after the configured attempts with the last status', async () => {
    const { server, client } = await echoSetup(
      [retryInterceptor({ idempotent, attempts: 3, backoff: fast })],
      {
        faults: [{ status: status.UNAVAILABLE }],
      },
    );
    const outcome = await echoUnary(client, {}, { callId: 'x' });
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    expect(server.attempts('x')).toBe(3);
  });

  it('never retries INVALID_ARGUMENT', async () => {
    const { server, client } = await echoSetup(
      [retryInterceptor({ idempotent, attempts: 5, backoff: fast })],
      {
        faults: [{ status: status.INVALID_ARGUMENT }],
      },
    );
    expect((await echoUnary(client, {}, { callId: 'bad' })).error?.code).toBe(
      status.INVALID_ARGUMENT,
    );
    expect(server.attempts('bad')).toBe(1);
  });

  it('does not retry a non-idempotent method unless opted in', async () => {
    const faults = [{ firstAttempts: 1, status: status.UNAVAILABLE }];
    const plain = await echoSetup([retryInterceptor({ idempotent, backoff: fast })], { faults });
    const refused = await echoUnary(plain.client, {}, { callId: 'u', method: 'UnaryUnsafe' });
    expect(refused.error?.code).toBe(status.UNAVAILABLE);
    expect(plain.server.attempts('u')).toBe(1);

    const optedIn = await echoSetup(
      [retryInterceptor({ idempotent: [...idempotent, ECHO_METHODS.unaryUnsafe], backoff: fast })],
      { faults },
    );
    expect((await echoUnary(optedIn.client, {}, { callId: 'u', method: 'UnaryUnsafe' })).ok).toBe(
      true,
    );
    expect(optedIn.server.attempts('u')).toBe(2);
  });

  it('honours a 300 ms pushback', async () => {
    const { server, client } = await echoSetup([retryInterceptor({ idempotent, backoff: fast })], {
      faults: [{ firstAttempts: 1, status: status.RESOURCE_EXHAUSTED, pushbackMs: 300 }],
    });
    expect((await echoUnary(client, {}, { callId: 'p' })).ok).toBe(true);
    const [first, second] = server.observed;
    expect(server.attempts('p')).toBe(2);
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(300);
  });

  it('stops on negative or malformed pushback, and without pushback', async () => {
    for (const pushbackMs of [-1, 'soon', undefined]) {
      const { server, client } = await echoSetup(
        [retryInterceptor({ idempotent, backoff: fast })],
        {
          faults: [
            {
              status: status.RESOURCE_EXHAUSTED,
              ...(pushbackMs === undefined ? {} : { pushbackMs }),
            },
          ],
        },
      );
      expect((await echoUnary(client, {}, { callId: 'n' })).error?.code).toBe(
        status.RESOURCE_EXHAUSTED,
      );
      expect(server.attempts('n')).toBe(1);
    }
  });

  it('gives every attempt the remaining time of the caller deadline, decreasing', async () => {
    const { server, client } = await echoSetup(
      [retryInterceptor({ idempotent, attempts: 4, backoff: { ...fast, baseDelayMs: 30 } })],
      { faults: [{ firstAttempts: 3, status: status.UNAVAILABLE }] },
    );
    const deadline = Date.now() + 3_000;
    expect((await echoUnary(client, {}, { callId: 'd', callOptions: { deadline } })).ok).toBe(true);
    const seen = server.observed;
    expect(seen).toHaveLength(4);
    // grpc-timeout is relative, so the server's clock reads it late by the transit time; what it
    // must never get is more than the caller had left when the attempt was sent — and a retry is
    // sent after the previous attempt arrived.
    seen.forEach((o, i) => {
      expect(o.deadlineRemainingMs as number).toBeLessThanOrEqual(3_000);
      const previous = seen[i - 1];
      if (previous)
        expect(o.deadlineRemainingMs as number).toBeLessThanOrEqual(
          deadline - previous.receivedAt + 1,
        );
    });
    const remaining = seen.map((o) => o.deadlineRemainingMs as number);
    for (let i = 1; i < remaining.length; i++)
      expect(remaining[i]).toBeLessThan(remaining[i - 1] as number);
  });

  it('retries a per-attempt DEADLINE_EXCEEDED within the call deadline', async () => {
    const { server, client } = await echoSetup(
      [retryInterceptor({ idempotent, attempts: 3, backoff: fast, attemptTimeoutMs: 100 })],
      { faults: [{ firstAttempts: 1, hang: true }] },
    );
    const outcome = await echoUnary(
      client,
      {},
      { callId: 'h', callOptions: { deadline: Date.now() + 2_000 } },
    );
    expect(outcome.ok).toBe(true);
    expect(server.attempts('h')).toBe(2);
    expect(server.observed[0]?.deadlineRemainingMs).toBeLessThanOrEqual(100);
  });

  it('retries a server stream that fails before its first message, not one that failed after', async () => {
    const { server, client } = await echoSetup(
      [retryInterceptor({ idempotent, attempts: 3, backoff: fast })],
      {
        faults: [{ methods: ['ServerStream'], firstAttempts: 1, status: status.UNAVAILABLE }],
      },
    );
    const early = await echoServerStream(client, { message: 's', count: 3 }, { callId: 'early' });
    expect(early.error).toBeUndefined();
    expect(early.messages.map((m) => m.attempt)).toEqual([2, 2, 2]);
    expect(server.attempts('early')).toBe(2);

    server.setFaults([
      { methods: ['ServerStream'], failAfterMessages: 1, status: status.UNAVAILABLE },
    ]);
    const late = await echoServerStream(client, { message: 's', count: 3 }, { callId: 'late' });
    expect(late.messages).toHaveLength(1);
    expect(late.error?.code).toBe(status.UNAVAILABLE);
    expect(server.attempts('late')).toBe(1);
  });

  it('cancel during backoff ends the call with CANCELLED at once and leaves no timer', async () => {
    const { server, client } = await echoSetup(
      [
        retryInterceptor({
          idempotent,
          attempts: 3,
          backoff: { ...fast, baseDelayMs: 5_000, maxDelayMs: 5_000 },
        }),
      ],
      { faults: [{ status: status.UNAVAILABLE }] },
    );
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const { Metadata } = await import('@grpc/grpc-js');
    const md = new Metadata();
    md.set('x-call-id', 'c');
    const result = new Promise<{ code: number; at: number }>((resolve) => {
      const call = client.Unary({}, md, (error) =>
        resolve({ code: error?.code ?? -1, at: performance.now() }),
      );
      void (async () => {
        await expect.poll(() => server.attempts('c')).toBe(1);
        await new Promise((r) => setImmediate(r));
        cancelledAt = performance.now();
        call.cancel();
      })();
    });
    let cancelledAt = 0;
    const { code, at } = await result;
    expect(code).toBe(status.CANCELLED);
    expect(at - cancelledAt).toBeLessThan(50);
    expect(server.attempts('c')).toBe(1);
    expect(
      process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length,
    ).toBeLessThanOrEqual(before);
  });
});

describe('pushback and deadlines: the engine decides (gRFC A6)', () => {
  for (const code of [status.UNAVAILABLE, status.RESOURCE_EXHAUSTED]) {
    const name = status[code];
    it(`waits a 300 ms pushback on ${name} instead of the backoff (server-observed)`, async () => {
      const { server, client } = await echoSetup([retryInterceptor({ backoff: fast })], {
        faults: [{ firstAttempts: 1, status: code, pushbackMs: 300 }],
      });
      expect((await echoUnary(client, {}, { callId: 'p' })).ok).toBe(true);
      const [first, second] = server.observed;
      expect(server.attempts('p')).toBe(2);
      expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(300);
    });

    it(`does not retry ${name} with pushback -1 or a non-numeric one`, async () => {
      for (const pushbackMs of [-1, 'soon']) {
        const { server, client } = await echoSetup([retryInterceptor({ backoff: fast })], {
          faults: [{ status: code, pushbackMs }],
        });
        expect((await echoUnary(client, {}, { callId: 'n' })).error?.code).toBe(code);
        expect(server.attempts('n')).toBe(1);
      }
    });
  }

  it('skips a retry that cannot start before the deadline: the caller gets the last UNAVAILABLE', async () => {
    const slow = { baseDelayMs: 1_000, strategy: 'linear', jitter: 'none' } as const;
    const { server, client } = await echoSetup(
      [only({ idempotent, retry: { attempts: 3, backoff: slow } })],
      { faults: [{ status: status.UNAVAILABLE, details: 'down' }] },
    );
    const outcome = await echoUnary(
      client,
      {},
      { callId: 'd', callOptions: { deadline: Date.now() + 400 } },
    );
    // Waiting would have ended in DEADLINE_EXCEEDED; the skip reports the attempt's own status.
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    expect(outcome.error?.details).toBe('down');
    expect(server.attempts('d')).toBe(1);
  });

  it('tells onRetry the attempt that failed; a throwing listener breaks nothing', async () => {
    const events: unknown[] = [];
    const { server, client } = await echoSetup(
      [
        only({
          idempotent,
          retry: {
            attempts: 3,
            backoff: fast,
            onRetry: (e) => {
              events.push(e);
              throw new Error('listener bug');
            },
          },
        }),
      ],
      { faults: [{ firstAttempts: 2, status: status.UNAVAILABLE }] },
    );
    expect((await echoUnary(client, {}, { callId: 'e' })).ok).toBe(true);
    expect(server.attempts('e')).toBe(3);
    expect(events).toEqual([
      { path: ECHO_METHODS.unary, attempt: 1, delayMs: 5, code: status.UNAVAILABLE },
      { path: ECHO_METHODS.unary, attempt: 2, delayMs: 10, code: status.UNAVAILABLE },
    ]);
  });
});

describe('the standard stack (no options)', () => {
  it('retries an idempotent method', async () => {
    const { server, client } = await echoSetup([resilienceInterceptor({ idempotent })], {
      faults: [{ firstAttempts: 2, status: status.UNAVAILABLE }],
    });
    expect((await echoUnary(client, {}, { callId: 's' })).value?.attempt).toBe(3);
    expect(server.attempts('s')).toBe(3);
  });

  it('retries a call of a non-idempotent method only when it never reached the server', async () => {
    // Reached the server: not repeated.
    const sent = await echoSetup([resilienceInterceptor()], {
      faults: [{ status: status.UNAVAILABLE }],
    });
    const once = await echoUnary(sent.client, {}, { callId: 'u', method: 'UnaryUnsafe' });
    expect(once.error?.code).toBe(status.UNAVAILABLE);
    expect(sent.server.attempts('u')).toBe(1);

    // Nothing listens: every attempt fails before a stream opens, so all three are made.
    const port = await closedPort();
    let attempts = 0;
    const counter: Interceptor = (options, next) => {
      attempts++;
      return next(options) as ReturnType<Interceptor>;
    };
    const client = createEchoClient(`127.0.0.1:${port}`, {
      ...disableGrpcRetries,
      interceptors: [resilienceInterceptor(), counter],
    });
    try {
      const refused = await echoUnary(client, {}, { method: 'UnaryUnsafe' });
      expect(refused.error?.code).toBe(status.UNAVAILABLE);
      expect(refused.error?.details).toMatch(/No connection established/);
      expect(attempts).toBe(3);
    } finally {
      client.close();
    }
  });

  it('a retry waiting in its backoff when the client closes ends the call; nothing throws from the timer', async () => {
    let retried!: () => void;
    const waiting = new Promise<void>((resolve) => {
      retried = resolve;
    });
    const { server, client } = await echoSetup(
      [
        only({
          idempotent,
          retry: {
            attempts: 3,
            backoff: { baseDelayMs: 100, strategy: 'linear', jitter: 'none' },
            onRetry: () => retried(),
          },
        }),
      ],
      { faults: [{ firstAttempts: 1, status: status.UNAVAILABLE }] },
    );
    const outcome = echoUnary(client, { message: 'm' }, { callId: 'closed' });
    await waiting;
    client.close();
    const { error } = await outcome;
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toMatch(/shut down/i);
    expect(server.attempts('closed')).toBe(1);
  });

  it('warns once, through onWarning, only when a retry asked for selects no idempotent method', () => {
    const warnings: string[] = [];
    const onWarning = (w: { code: string }) => warnings.push(w.code);
    // The standard retry covering no method is what a client without `idempotent` wants.
    resilienceInterceptor({ onWarning });
    resilienceInterceptor({ retry: { attempts: 3 }, idempotent, onWarning });
    resilienceInterceptor({ retry: false, onWarning });
    expect(warnings).toEqual([]);
    resilienceInterceptor({ retry: { attempts: 3 }, onWarning });
    resilienceInterceptor({ retry: { attempts: 3 }, idempotent: [], onWarning });
    expect(warnings).toEqual(['no-idempotent-methods', 'no-idempotent-methods']);
    expect(() =>
      resilienceInterceptor({
        retry: { attempts: 2 },
        onWarning: () => {
          throw new Error('listener bug');
        },
      }),
    ).not.toThrow();
  });
});

describe('attemptTimeoutMs', () => {
  it('retries a DEADLINE_EXCEEDED the server sent under the attempt deadline, not one without it', async () => {
    const faults = [{ firstAttempts: 1, status: status.DEADLINE_EXCEEDED }];
    const under = await echoSetup([retryInterceptor({ backoff: fast, attemptTimeoutMs: 1_000 })], {
      faults,
    });
    const retried = await echoUnary(
      under.client,
      {},
      { callId: 't', callOptions: { deadline: Date.now() + 5_000 } },
    );
    expect(retried.ok).toBe(true);
    expect(under.server.attempts('t')).toBe(2);

    const without = await echoSetup([retryInterceptor({ backoff: fast })], { faults });
    const once = await echoUnary(without.client, {}, { callId: 't' });
    expect(once.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(without.server.attempts('t')).toBe(1);
  });
});

describe('resilienceInterceptor idempotent selectors', () => {
  it('rejects a bare method name or a path without its slash, naming the entry', () => {
    expect(() => resilienceInterceptor({ idempotent: ['SayHello'] })).toThrow(
      /resilienceInterceptor: idempotent\[0\] is "SayHello", which matches no method: give a full method path/,
    );
    expect(() => resilienceInterceptor({ idempotent: ['hello.Greeter/SayHello'] })).toThrow(
      /idempotent\[0\] .* did you mean "\/hello\.Greeter\/SayHello"\?/,
    );
    // @ts-expect-error a bare string is not a list of selectors
    expect(() => resilienceInterceptor({ idempotent: 'SayHello' })).toThrow(TypeError);
  });

  it('retries a method listed through idempotentMethods(definition, also), at a real server', async () => {
    const safe = idempotentMethods(loadEchoPackageDefinition(), [ECHO_METHODS.unaryUnsafe]);
    expect(() =>
      idempotentMethods(loadEchoPackageDefinition(), ['/breakwater.chaos.v1.Echo/Unsafe']),
    ).toThrow(/also\[0\] .* matches no method of the definition/);
    const { server, client } = await echoSetup(
      [retryInterceptor({ idempotent: safe, backoff: fast })],
      {
        faults: [{ firstAttempts: 1, status: status.UNAVAILABLE }],
      },
    );
    const outcome = await echoUnary(
      client,
      { message: 'm' },
      { callId: 'also', method: 'UnaryUnsafe' },
    );
    expect(outcome.ok && outcome.value.attempt).toBe(2);
    expect(server.attempts('also')).toBe(2);
  });
});
