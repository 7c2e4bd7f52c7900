import { loadEchoPackageDefinition } from '@breakwater/chaos';
import { idempotentMethods } from '@breakwater/core/grpc';
import { fixedRandom } from '@breakwater/core/time';
import { ClientError, createClientFactory, Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { retryMiddleware } from '../src/index.js';
import {
  callId,
  channelTo,
  chaosServer,
  echoClient,
  echoDefinition,
  protoLoaderEchoDefinition,
  rejection,
} from './helpers.js';

// Short, exact backoff: random 0 under full jitter would be 0 ms, so use additive jitter at 0.
const fast = { baseDelayMs: 5, random: fixedRandom(0) };

describe('retryMiddleware against a chaos server', () => {
  it('retries UNAVAILABLE until attempt k; the server counted exactly k attempts', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 2 }],
    });
    const retries: number[] = [];
    const client = echoClient(
      server.address,
      retryMiddleware({ backoff: fast, onRetry: (e) => retries.push(e.attempt) }),
    );
    const reply = await client.Unary({ message: 'hi' }, callId('k3'));
    expect(reply).toMatchObject({ message: 'hi', attempt: 3 });
    expect(server.attempts('k3')).toBe(3);
    expect(server.observed.map((o) => o.previousAttempts)).toEqual([undefined, 1, 2]);
    // Each event names the attempt that failed.
    expect(retries).toEqual([1, 2]);
  });

  it('counts the per-call attempts option as attempts, the first included', async () => {
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const client = echoClient(server.address, retryMiddleware({ backoff: fast }));
    const error = await rejection(client.Unary({}, { ...callId('a'), attempts: 4 }));
    expect(error).toBeInstanceOf(ClientError);
    expect(error.code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('a')).toBe(4);
  });

  it('never retries INVALID_ARGUMENT', async () => {
    const server = await chaosServer({ faults: [{ status: Status.INVALID_ARGUMENT }] });
    const client = echoClient(server.address, retryMiddleware({ backoff: fast }));
    const error = await rejection(client.Unary({}, callId('bad')));
    expect(error.code).toBe(Status.INVALID_ARGUMENT);
    expect(server.attempts('bad')).toBe(1);
  });

  it('does not retry a method not marked idempotent unless the call opts in', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 1 }],
    });
    const warnings: string[] = [];
    const client = echoClient(
      server.address,
      retryMiddleware({ backoff: fast, onWarning: (w) => warnings.push(String(w.path)) }),
    );
    const error = await rejection(client.UnaryUnsafe({}, callId('unsafe')));
    expect(error.code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('unsafe')).toBe(1);
    const reply = await client.UnaryUnsafe({}, { ...callId('opt-in'), retry: true });
    expect(reply.attempt).toBe(2);
    expect(server.attempts('opt-in')).toBe(2);
    await rejection(client.UnaryUnsafe({}, callId('unsafe-again')));
    // Said once, through the listener, for the method that is not known idempotent.
    expect(warnings).toEqual(['/breakwater.chaos.v1.Echo/UnaryUnsafe']);
  });

  it('reads idempotency from a proto-loader definition only through an explicit list', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 1 }],
    });
    // nice-grpc converts a `{ path }`-shaped definition with `options: {}`: the marking is lost.
    const definition = protoLoaderEchoDefinition();
    expect(JSON.stringify(loadEchoPackageDefinition())).toContain('NO_SIDE_EFFECTS');
    const channel = channelTo(server.address);
    const unmarked = createClientFactory()
      .use(retryMiddleware({ backoff: fast }))
      .create(definition, channel);
    const listed = createClientFactory()
      .use(
        retryMiddleware({
          backoff: fast,
          idempotent: idempotentMethods(loadEchoPackageDefinition()),
        }),
      )
      .create(definition, channel);
    const error = await rejection(unmarked.Unary({}, callId('lost')));
    expect(error.code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('lost')).toBe(1);
    await listed.Unary({}, callId('listed'));
    expect(server.attempts('listed')).toBe(2);
  });

  it('honours grpc-retry-pushback-ms: the retry reaches the server no sooner than the pushback', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.RESOURCE_EXHAUSTED, pushbackMs: 300, firstAttempts: 1 }],
    });
    const client = echoClient(server.address, retryMiddleware({ backoff: fast }));
    await client.Unary({}, callId('push'));
    const [first, second] = server.observed;
    expect(server.attempts('push')).toBe(2);
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(300);
  });

  it.each([
    ['UNAVAILABLE', Status.UNAVAILABLE],
    ['RESOURCE_EXHAUSTED', Status.RESOURCE_EXHAUSTED],
  ])(
    '%s with pushback 300 ms: the retry waits the pushback, not the backoff',
    async (_, status) => {
      const server = await chaosServer({ faults: [{ status, pushbackMs: 300, firstAttempts: 1 }] });
      const delays: number[] = [];
      const client = echoClient(
        server.address,
        retryMiddleware({ backoff: fast, onRetry: (e) => delays.push(e.delayMs) }),
      );
      await client.Unary({}, callId('p300'));
      const [first, second] = server.observed;
      expect(server.attempts('p300')).toBe(2);
      expect(delays).toEqual([300]);
      expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(300);
    },
  );

  it.each([
    ['UNAVAILABLE', Status.UNAVAILABLE, -1],
    ['UNAVAILABLE', Status.UNAVAILABLE, 'soon'],
    ['RESOURCE_EXHAUSTED', Status.RESOURCE_EXHAUSTED, -1],
    ['RESOURCE_EXHAUSTED', Status.RESOURCE_EXHAUSTED, 'soon'],
  ])(
    '%s with pushback %s: not retried (gRFC A6), the caller gets that status',
    async (_, status, pushbackMs) => {
      const server = await chaosServer({ faults: [{ status, pushbackMs }] });
      const client = echoClient(server.address, retryMiddleware({ backoff: fast }));
      const error = await rejection(client.Unary({}, callId('stop')));
      expect(error.code).toBe(status);
      expect(server.attempts('stop')).toBe(1);
    },
  );

  it('a throwing onRetry listener never breaks the call', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.UNAVAILABLE, firstAttempts: 1 }],
    });
    const client = echoClient(
      server.address,
      retryMiddleware({
        backoff: fast,
        onRetry: () => {
          throw new Error('listener bug');
        },
      }),
    );
    expect((await client.Unary({}, callId('throws'))).attempt).toBe(2);
    expect(server.attempts('throws')).toBe(2);
  });

  it('retries a non-idempotent call that never reached the server (connection refused)', async () => {
    const server = await chaosServer();
    await server.stop();
    const client = createClientFactory()
      .use(
        retryMiddleware({
          attempts: 10,
          backoff: { baseDelayMs: 100, maxDelayMs: 100, jitter: 'none' },
          // The server comes back while the call waits for its first retry.
          onRetry: (e) => {
            if (e.attempt === 1) void server.restart();
          },
          onWarning: () => {},
        }),
      )
      .create(
        echoDefinition(),
        channelTo(server.address, { 'grpc.initial_reconnect_backoff_ms': 50 }),
      );
    const reply = await client.UnaryUnsafe({ message: 'once' }, callId('never-sent'));
    expect(reply.message).toBe('once');
    // Every refused attempt was repeated; the server saw the request exactly once.
    expect(server.attempts('never-sent')).toBe(1);
  });

  it('does not retry a non-idempotent call the server answered UNAVAILABLE', async () => {
    const server = await chaosServer({
      faults: [
        { status: Status.UNAVAILABLE, details: 'No connection established', firstAttempts: 1 },
      ],
    });
    const client = echoClient(
      server.address,
      retryMiddleware({ backoff: fast, onWarning: () => {} }),
    );
    expect((await rejection(client.UnaryUnsafe({}, callId('seen')))).code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('seen')).toBe(1);
  });

  it('does not retry RESOURCE_EXHAUSTED with negative or without pushback', async () => {
    const server = await chaosServer({
      faults: [
        { methods: ['Unary'], status: Status.RESOURCE_EXHAUSTED, pushbackMs: -1 },
        { methods: ['UnaryUnsafe'], status: Status.RESOURCE_EXHAUSTED },
      ],
    });
    const client = echoClient(
      server.address,
      retryMiddleware({ backoff: fast, idempotent: 'all' }),
    );
    const negative = await rejection(client.Unary({}, callId('neg')));
    const none = await rejection(client.UnaryUnsafe({}, callId('none')));
    expect([negative.code, none.code]).toEqual([
      Status.RESOURCE_EXHAUSTED,
      Status.RESOURCE_EXHAUSTED,
    ]);
    expect([server.attempts('neg'), server.attempts('none')]).toEqual([1, 1]);
  });

  it('rejects at once with AbortError when the signal aborts during backoff', async () => {
    const server = await chaosServer({ faults: [{ status: Status.UNAVAILABLE }] });
    const controller = new AbortController();
    const client = echoClient(
      server.address,
      retryMiddleware({
        backoff: { baseDelayMs: 10_000, random: fixedRandom(0) },
        onRetry: () => setTimeout(() => controller.abort(), 20),
      }),
    );
    const started = performance.now();
    const error = await rejection(
      client.Unary({}, { ...callId('abort'), signal: controller.signal }),
    );
    expect(error.name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.attempts('abort')).toBe(1);
  });

  it('delivers only the answering attempt’s trailer to onTrailer', async () => {
    const server = await chaosServer({
      faults: [{ status: Status.RESOURCE_EXHAUSTED, pushbackMs: 10, firstAttempts: 1 }],
    });
    const client = echoClient(server.address, retryMiddleware({ backoff: fast }));
    const trailers: Array<string | undefined> = [];
    await client.Unary(
      {},
      {
        ...callId('t'),
        onTrailer: (t) => trailers.push(t.get('grpc-retry-pushback-ms') as string | undefined),
      },
    );
    expect(trailers).toEqual([undefined]);
    expect(server.attempts('t')).toBe(2);
  });

  it('retries a server stream that fails before its first message, not one that fails after', async () => {
    const server = await chaosServer({
      faults: [
        { methods: ['ServerStream'], status: Status.UNAVAILABLE, firstAttempts: 1, rate: 1 },
      ],
    });
    const client = echoClient(server.address, retryMiddleware({ backoff: fast }));
    const before: number[] = [];
    for await (const m of client.ServerStream({ count: 3 }, callId('s1'))) before.push(m.index);
    expect(before).toEqual([0, 1, 2]);
    expect(server.attempts('s1')).toBe(2);

    server.setFaults([
      { methods: ['ServerStream'], status: Status.UNAVAILABLE, failAfterMessages: 1 },
    ]);
    const after: number[] = [];
    const error = await rejection(
      (async () => {
        for await (const m of client.ServerStream({ count: 3 }, callId('s2'))) after.push(m.index);
      })(),
    );
    expect(after).toEqual([0]);
    expect(error.code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('s2')).toBe(1);
  });

  it('lets client and bidi streams pass through untouched', async () => {
    const server = await chaosServer({
      faults: [{ methods: ['Bidi'], status: Status.UNAVAILABLE }],
    });
    const client = echoClient(
      server.address,
      retryMiddleware({ backoff: fast, idempotent: 'all' }),
    );
    async function* two() {
      yield { message: 'a' };
      yield { message: 'b' };
    }
    expect(await client.ClientStream(two(), callId('cs'))).toMatchObject({ message: 'a,b' });
    const error = await rejection(
      (async () => {
        for await (const _ of client.Bidi(two(), callId('bidi'))) {
          // drain
        }
      })(),
    );
    expect(error.code).toBe(Status.UNAVAILABLE);
    expect(server.attempts('bidi')).toBe(1);
  });
});
