import { ECHO_METHODS, ECHO_SERVICE, echoUnary } from '@breakwater/chaos';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createRoutingChannel } from '../src/index.js';
import { routingSetup } from './routing-helpers.js';

const fast = { baseDelayMs: 5, strategy: 'exponential', maxDelayMs: 20, jitter: 'none' } as const;
const failing = { faults: [{ status: status.UNAVAILABLE }] };
const TWO_FAILURES = { failureThreshold: 2, failureSpanMs: 0, window: false } as const;
const deadline = () => new Date(Date.now() + 5_000);

describe('createRoutingChannel methods: per-method policy against real servers', () => {
  it("runs a method entry's retries and deadline: the servers see its attempts, the other method the client's", async () => {
    const { servers, client } = await routingSetup([failing, failing], {
      idempotent: [ECHO_SERVICE],
      methods: {
        [ECHO_METHODS.unary]: { retry: { attempts: 3, backoff: fast }, timeoutMs: 1_000 },
      },
    });

    const callOptions = { deadline: deadline() };
    expect((await echoUnary(client, {}, { callId: 'entry', callOptions })).ok).toBe(false);
    const other = await echoUnary(
      client,
      {},
      { callId: 'client', callOptions, method: 'UnaryUnsafe' },
    );
    expect(other.ok).toBe(false);

    // The entry: 3 attempts on each target before failing over; the client: one per target.
    for (const server of servers) {
      expect(server.attempts('entry')).toBe(3);
      expect(server.attempts('client')).toBe(1);
    }
    const first = (callId: string) =>
      servers[0]?.observed.find((o) => o.callId === callId)?.deadlineRemainingMs as number;
    // The entry's timeoutMs bounds the call below the caller's 5 s deadline.
    expect(first('entry')).toBeLessThanOrEqual(1_000);
    expect(first('entry')).toBeGreaterThan(500);
    expect(first('client')).toBeGreaterThan(4_000);
  });

  it("sends an entry's attemptTimeoutMs as each attempt's deadline, and turns retries off with retry: false", async () => {
    const { servers, client } = await routingSetup([failing, failing], {
      idempotent: [ECHO_SERVICE],
      protection: { retry: { attempts: 2, backoff: fast } },
      methods: { [ECHO_METHODS.unaryUnsafe]: { retry: false, attemptTimeoutMs: 300 } },
    });

    const callOptions = { deadline: deadline() };
    await echoUnary(client, {}, { callId: 'entry', callOptions, method: 'UnaryUnsafe' });
    await echoUnary(client, {}, { callId: 'client', callOptions });

    for (const server of servers) {
      expect(server.attempts('entry')).toBe(1);
      expect(server.attempts('client')).toBe(2);
    }
    const seen = servers[0]?.observed.find((o) => o.callId === 'entry')?.deadlineRemainingMs;
    expect(seen).toBeLessThanOrEqual(300);
    expect(seen).toBeGreaterThan(100);
  });

  it("scopes an entry's circuits to its method: the other method still reaches the targets", async () => {
    const { servers, channel, client } = await routingSetup([failing], {
      circuit: false,
      methods: { [ECHO_METHODS.unaryUnsafe]: { circuit: TWO_FAILURES } },
    });

    for (let i = 0; i < 3; i++) await echoUnary(client, {}, { method: 'UnaryUnsafe' });
    for (let i = 0; i < 3; i++) await echoUnary(client, {});

    expect(servers[0]?.total('UnaryUnsafe')).toBe(2);
    expect(servers[0]?.total('Unary')).toBe(3);
    expect(channel.circuit('replica-1', ECHO_METHODS.unaryUnsafe)?.state).toBe('open');
    expect(channel.circuit('replica-1', ECHO_METHODS.unary)).toBeUndefined();
    expect(channel.circuit('replica-1')).toBeUndefined();
  });

  it('refuses bad entries at construction, naming the full option path', () => {
    const targets = [{ id: 'a', address: '127.0.0.1:1' }];
    const make = (methods: unknown) =>
      createRoutingChannel({ targets, methods: methods as never }).close();
    expect(() => make({ SayHello: { timeoutMs: 100 } })).toThrow(
      /^createRoutingChannel: methods\["SayHello"\] is "SayHello", which matches no method/,
    );
    expect(() => make({ 'pkg.Svc': { retry: { attemps: 3 } } })).toThrow(
      'createRoutingChannel: unknown option `methods["pkg.Svc"].retry.attemps` — did you mean `methods["pkg.Svc"].retry.attempts`?',
    );
    expect(() => make({ 'pkg.Svc': { timeoutMs: -1 } })).toThrow(
      /^createRoutingChannel: methods\["pkg\.Svc"\]\.timeoutMs must be > 0/,
    );
    expect(() => make({ 'pkg.Svc': { hedge: { attempts: 3 } } })).toThrow(
      /^createRoutingChannel: methods\["pkg\.Svc"\]\.hedge/,
    );

    // Friction 2: a bare name (or a string, which is an iterable of characters) matches nothing.
    const idempotent = (selector: unknown) =>
      createRoutingChannel({ targets, idempotent: selector as never }).close();
    expect(() => idempotent(['SayHello'])).toThrow(
      /^createRoutingChannel: idempotent\[0\] is "SayHello", which matches no method/,
    );
    expect(() => idempotent(['hello.Greeter/SayHello'])).toThrow(TypeError);
    expect(() => idempotent('SayHello')).toThrow(TypeError);
  });
});
