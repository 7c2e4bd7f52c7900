import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import {
  createEchoClient,
  ECHO_METHODS,
  ECHO_SERVICE,
  type EchoResponse,
  echoBidi,
  echoServerStream,
  echoUnary,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import { createCircuitBreaker, isRoutingError, STANDARD_RESILIENCE } from '@breakwater/core';
import { type ServiceError, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createGrpcHealthProbe } from '../src/health.js';
import { breakwaterCause, createRoutingChannel, idempotentMethods } from '../src/index.js';
import { replicas, routingSetup } from './routing-helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());
const unavailable = { status: status.UNAVAILABLE };

/** `protection` with 3 attempts per target at a fixed backoff, its `onRetry` recording into `heard`. */
const heardRetries = (baseDelayMs: number, heard: number[]) => ({
  retry: {
    attempts: 3,
    backoff: { baseDelayMs, jitter: 'none' as const },
    onRetry: (e: { attempt: number }) => void heard.push(e.attempt),
  },
});

describe('createRoutingChannel with a plain grpc-js client', () => {
  it('carries all four call types to the preferred target', async () => {
    const { servers, client } = await routingSetup([{}, {}], { idempotent });
    expect((await echoUnary(client, { message: 'u' })).value?.replica).toBe('replica-1');
    const stream = await echoServerStream(client, { message: 's', count: 3 });
    expect(stream.messages.map((m) => m.index)).toEqual([0, 1, 2]);
    expect(await echoBidi(client, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    const reply = await new Promise<EchoResponse>((resolve, reject) => {
      const call = client.ClientStream(
        {} as never,
        (error: ServiceError | null, value?: EchoResponse) =>
          error ? reject(error) : resolve(value as EchoResponse),
      );
      call.write({ message: 'x' });
      call.write({ message: 'y' });
      call.end();
    });
    expect(reply.replica).toBe('replica-1');
    expect(servers[0]?.total()).toBe(4);
    expect(servers[1]?.total()).toBe(0);
  });

  it('fails an idempotent unary call over to the next target', async () => {
    const { servers, client } = await routingSetup([{ faults: [unavailable] }, {}], {
      idempotent,
    });
    const outcome = await echoUnary(client, { message: 'hi' }, { callId: 'f' });
    expect(outcome.value).toMatchObject({ message: 'hi', replica: 'replica-2' });
    expect(servers[0]?.attempts('f')).toBe(1);
    // The second target saw the call as a retry of one earlier attempt.
    expect(servers[1]?.observed[0]?.previousAttempts).toBe(1);
  });

  it('retries on the same target per `protection.retry` before failing over', async () => {
    const { servers, client } = await routingSetup(
      [{ faults: [{ firstAttempts: 1, status: status.UNAVAILABLE }] }, {}],
      {
        idempotent,
        protection: { retry: { attempts: 2, backoff: { baseDelayMs: 5, jitter: 'none' } } },
      },
    );
    const outcome = await echoUnary(client, {}, { callId: 'r' });
    expect(outcome.value?.replica).toBe('replica-1');
    expect(servers[0]?.attempts('r')).toBe(2);
    expect(servers[0]?.observed[1]?.previousAttempts).toBe(1);
    expect(servers[1]?.total()).toBe(0);
  });

  it('skips a retry that cannot start before the call deadline: the last UNAVAILABLE at once', async () => {
    const retried: number[] = [];
    const { servers, client } = await routingSetup([{ faults: [unavailable] }], {
      idempotent,
      protection: heardRetries(2_000, retried),
    });
    const deadline = performance.timeOrigin + performance.now() + 500;
    const outcome = await echoUnary(client, {}, { callId: 'd', callOptions: { deadline } });
    // Not DEADLINE_EXCEEDED after a 2 s wait: the retry was never scheduled.
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    expect(retried).toEqual([]);
    expect(servers[0]?.attempts('d')).toBe(1);
  });

  it('a call whose deadline has passed reaches no target and ends DEADLINE_EXCEEDED', async () => {
    const { servers, client } = await routingSetup([{}], { idempotent });
    const outcome = await echoUnary(client, {}, { callId: 'late', callOptions: { deadline: 1 } });
    expect(outcome.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(servers[0]?.attempts('late')).toBe(0);
  });

  it('never fails a non-idempotent call over', async () => {
    const { servers, client } = await routingSetup([{ faults: [unavailable] }, {}], {
      idempotent,
    });
    const outcome = await echoUnary(client, {}, { callId: 'u', method: 'UnaryUnsafe' });
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    expect(servers[0]?.attempts('u')).toBe(1);
    expect(servers[1]?.total()).toBe(0);
  });

  it('retries and fails over a non-idempotent call whose request never left (connection refused)', async () => {
    const retried: number[] = [];
    const { servers, client } = await routingSetup([{}, {}], {
      idempotent,
      protection: heardRetries(5, retried),
    });
    await servers[0]?.stop();
    const outcome = await echoUnary(client, {}, { callId: 'ns', method: 'UnaryUnsafe' });
    expect(outcome.value?.replica).toBe('replica-2');
    // Two retries on the refused target, then the failover; the request reached no server twice.
    expect(retried).toEqual([1, 2]);
    expect(servers[1]?.attempts('ns')).toBe(1);
  });

  it('fails a server stream over before its first message, never after', async () => {
    const before = await routingSetup([{ faults: [unavailable] }, {}], { idempotent });
    const ok = await echoServerStream(before.client, { count: 2 }, { callId: 'b' });
    expect(ok.error).toBeUndefined();
    expect(ok.messages.map((m) => m.replica)).toEqual(['replica-2', 'replica-2']);
    expect(before.servers[0]?.attempts('b')).toBe(1);

    const after = await routingSetup([{ faults: [{ ...unavailable, failAfterMessages: 1 }] }, {}], {
      idempotent,
    });
    const broken = await echoServerStream(after.client, { count: 3 }, { callId: 'a' });
    expect(broken.messages.map((m) => m.replica)).toEqual(['replica-1']);
    expect(broken.error?.code).toBe(status.UNAVAILABLE);
    expect(after.servers[1]?.total()).toBe(0);
  });

  it('a server stream that breaks after its first message counts against its target’s circuit', async () => {
    const { client, channel } = await routingSetup(
      [{ faults: [{ ...unavailable, failAfterMessages: 1 }] }, {}],
      { idempotent, circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 } },
    );
    const broken = await echoServerStream(client, { count: 3 });
    expect(broken.error?.code).toBe(status.UNAVAILABLE);
    expect(channel.circuit('replica-1')?.state).toBe('open');
    expect(channel.health.snapshot()['replica-1']?.fail).toBe(1);
  });

  it('round-robin spreads calls evenly', async () => {
    const { servers, client } = await routingSetup([{}, {}, {}], {
      idempotent,
      selection: 'round-robin',
    });
    for (let i = 0; i < 30; i++) await echoUnary(client, {});
    expect(servers.map((s) => s.total())).toEqual([10, 10, 10]);
  });

  it('a hedge to the second target wins against a slow first', async () => {
    const { servers, client } = await routingSetup(
      [{ faults: [{ latency: { kind: 'fixed', ms: 1_500 } }] }, {}],
      { idempotent, hedge: { delayMs: 50 } },
    );
    const t0 = performance.now();
    const outcome = await echoUnary(client, { message: 'h' }, { callId: 'h' });
    expect(outcome.value?.replica).toBe('replica-2');
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(servers[1]?.attempts('h')).toBe(1);
    // The slow first attempt was cancelled, not left running.
    await expect.poll(() => servers[0]?.observed[0]?.outcome).toBe('CANCELLED');
  });

  it('sends no traffic to a target whose health check says NOT_SERVING', async () => {
    const probe = createGrpcHealthProbe();
    try {
      const { servers, client, channel } = await routingSetup([{}, {}], {
        idempotent,
        circuit: { failureSpanMs: 0, failureThreshold: 2 },
        health: { probe },
      });
      servers[0]?.setHealth('NOT_SERVING');
      await channel.checkHealth();
      await channel.checkHealth();
      const skipped: string[] = [];
      channel.onSkipped((e) => skipped.push(`${e.providerId}:${e.reason}`));
      const outcomes = [];
      for (let i = 0; i < 5; i++) outcomes.push(await echoUnary(client, {}));
      expect(replicas(outcomes)).toEqual(Array(5).fill('replica-2'));
      expect(servers[0]?.total()).toBe(0);
      // Its watch reported NOT_SERVING: ejected and tried after every other target, so a call
      // that replica-2 answers never even considers it.
      expect(channel.circuit('replica-1')?.state).toBe('open');
      expect(skipped).toEqual([]);
    } finally {
      probe.close();
    }
  });

  it('gives each target its own circuit: the standard one by default, none with `circuit: false`', async () => {
    const standard = await routingSetup([{}, {}], { idempotent });
    const a = standard.channel.circuit('replica-1');
    expect(a?.toJSON()).toMatchObject({
      state: 'closed',
      openDurationMs: STANDARD_RESILIENCE.circuit.openDurationMs,
    });
    expect(standard.channel.circuit('replica-2')).not.toBe(a);
    const none = await routingSetup([{}], { idempotent, circuit: false });
    expect(none.channel.circuit('replica-1')).toBeUndefined();
  });

  it('a target has one circuit: opened by idempotent calls, it also turns away calls that are not', async () => {
    const { servers, client, channel } = await routingSetup([{ faults: [unavailable] }, {}], {
      idempotent,
      // Hedging gives calls that must not repeat a router of their own: it shares the circuits.
      hedge: { delayMs: 1_000 },
      circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
    });
    expect((await echoUnary(client, {})).value?.replica).toBe('replica-2');
    expect(channel.circuit('replica-1')?.state).toBe('open');
    const unsafe = await echoUnary(client, {}, { callId: 'u', method: 'UnaryUnsafe' });
    expect(unsafe.value?.replica).toBe('replica-2');
    expect(servers[0]?.attempts('u')).toBe(0);
  });

  it('least-latency prefers the faster target once both are measured', async () => {
    const { servers, client } = await routingSetup(
      [{ faults: [{ latency: { kind: 'fixed', ms: 40 } }] }, {}],
      { idempotent, selection: 'least-latency' },
    );
    for (let i = 0; i < 12; i++) await echoUnary(client, {});
    expect(servers[0]?.total()).toBe(1);
    expect(servers[1]?.total()).toBe(11);
  });

  it('reports every target failing with the last status and a RoutingError cause', async () => {
    const { servers, client } = await routingSetup(
      [{ faults: [unavailable] }, { faults: [unavailable] }],
      {
        idempotent,
        circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
      },
    );
    const failed = await echoUnary(client, {});
    expect(failed.error?.code).toBe(status.UNAVAILABLE);
    const cause = (failed.error as { cause?: unknown }).cause;
    expect(isRoutingError(cause) && cause.visits.map((v) => v.status)).toEqual([
      'failed',
      'failed',
    ]);
    // Both circuits are open now: nothing reaches a server, and the cause says why.
    const refused = await echoUnary(client, {});
    expect(refused.error?.code).toBe(status.UNAVAILABLE);
    expect(refused.error?.details).toContain('replica-1 (circuit-open)');
    expect(isRoutingError(breakwaterCause(refused.error))).toBe(true);
    expect(servers.map((s) => s.total())).toEqual([1, 1]);
  });

  it('call.cancel() ends the call with CANCELLED and the server sees it cancelled', async () => {
    const { servers, client } = await routingSetup([{ faults: [{ hang: true }] }], { idempotent });
    let call: { cancel(): void } | undefined;
    const outcome = new Promise<ServiceError | null>((resolve) => {
      call = client.Unary({ message: 'c' }, (error: ServiceError | null) => resolve(error));
    });
    // Cancel once the attempt is running on the server (the target channel connects first).
    await expect.poll(() => servers[0]?.total(), { timeout: 5_000 }).toBe(1);
    call?.cancel();
    expect((await outcome)?.code).toBe(status.CANCELLED);
    await expect.poll(() => servers[0]?.observed[0]?.outcome).toBe('CANCELLED');
  });

  it('a CANCELLED sent by the server fails over, not retried on its target; the caller’s cancel is final', async () => {
    const retry = { attempts: 3, backoff: { baseDelayMs: 5, jitter: 'none' as const } };
    const cancelled = await routingSetup([{ faults: [{ status: status.CANCELLED }] }, {}], {
      idempotent,
      protection: { retry },
    });
    const outcome = await echoUnary(cancelled.client, {}, { callId: 'sc' });
    expect(outcome.value?.replica).toBe('replica-2');
    expect(cancelled.servers[0]?.attempts('sc')).toBe(1);

    const hung = await routingSetup([{ faults: [{ hang: true }] }, {}], {
      idempotent,
      protection: { retry },
    });
    let call: { cancel(): void } | undefined;
    const ended = new Promise<ServiceError | null>((resolve) => {
      call = hung.client.Unary({ message: 'cc' }, (error: ServiceError | null) => resolve(error));
    });
    await expect.poll(() => hung.servers[0]?.total(), { timeout: 5_000 }).toBe(1);
    call?.cancel();
    expect((await ended)?.code).toBe(status.CANCELLED);
    await new Promise((r) => setTimeout(r, 100));
    expect(hung.servers.map((s) => s.total())).toEqual([1, 0]);
  });

  it('closing the channel while a retry waits in its backoff ends the call UNAVAILABLE, as the interceptor does', async () => {
    let retried!: () => void;
    const waiting = new Promise<void>((resolve) => {
      retried = resolve;
    });
    const { servers, channel, client } = await routingSetup([{ faults: [unavailable] }], {
      idempotent,
      protection: {
        retry: {
          attempts: 3,
          backoff: { baseDelayMs: 100, jitter: 'none' },
          onRetry: () => retried(),
        },
      },
    });
    const outcome = echoUnary(client, {}, { callId: 'closed' });
    await waiting;
    channel.close();
    const { error } = await outcome;
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toMatch(/shut down/i);
    expect(servers[0]?.attempts('closed')).toBe(1);
  });

  it('rejects invalid options naming the option', async () => {
    const { createRoutingChannel } = await import('../src/index.js');
    expect(() => createRoutingChannel({ targets: [] })).toThrow(/targets/);
    expect(() => createRoutingChannel({ targets: [{ id: 'a' }] })).toThrow(
      /targets\[0\] needs exactly one of address or channel/,
    );
    expect(() =>
      createRoutingChannel({
        targets: [
          { id: 'a', address: '127.0.0.1:1' },
          { id: 'a', address: '127.0.0.1:2' },
        ],
      }),
    ).toThrow(/duplicate/);
    expect(() =>
      createRoutingChannel({
        targets: [{ id: 'a', address: '127.0.0.1:1' }],
        attemptTimeoutMs: 'x' as never,
      }),
    ).toThrow(/attemptTimeoutMs/);
    // 0.1's names are gone: the error names the full path.
    expect(() =>
      createRoutingChannel({
        targets: [{ id: 'a', address: '127.0.0.1:1', protection: { attempts: 2 } as never }],
      }),
    ).toThrow(/targets\[0\]\.protection\.attempts/);
    // 0.1's health circuit settings are gone: `circuit` takes createCircuitBreaker's names.
    const one = [{ id: 'a', address: '127.0.0.1:1' }];
    expect(() => createRoutingChannel({ targets: one, health: { failures: 3 } as never })).toThrow(
      /unknown option `health\.failures`/,
    );
    expect(() => createRoutingChannel({ targets: one, health: { reset: '30s' } as never })).toThrow(
      /unknown option `health\.reset`/,
    );
    expect(() => createRoutingChannel({ targets: one, circuit: { failureThreshold: 0 } })).toThrow(
      /createRoutingChannel: circuit\.failureThreshold must be > 0, got 0/,
    );
    expect(() =>
      createRoutingChannel({ targets: one, circuit: createCircuitBreaker() as never }),
    ).toThrow(/circuit is a CircuitBreaker, which every target would share/);
    expect(ECHO_METHODS.unary).toBe('/breakwater.chaos.v1.Echo/Unary');
  });
});

describe('a target that dies between the response message and the status', () => {
  /** A target (plain HTTP/2 speaking gRPC) that sends one response message, then drops the connection. */
  async function dyingTarget(): Promise<{ address: string; close(): void }> {
    const service = loadEchoPackageDefinition()[ECHO_SERVICE] as Record<
      string,
      { responseSerialize(v: unknown): Buffer }
    >;
    const body = service.Unary?.responseSerialize({ message: 'lost', replica: 'dying' }) as Buffer;
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    const server = createHttp2Server();
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => sockets.add(socket));
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write(frame, () =>
        setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, 20),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { address: `127.0.0.1:${port}`, close: () => server.close() };
  }

  it('fails an idempotent unary call over to a healthy target (the message was never delivered)', async () => {
    const dying = await dyingTarget();
    const healthy = await startGrpcChaosServer({ replica: 'healthy' });
    const channel = createRoutingChannel({
      targets: [
        { id: 'dying', address: dying.address },
        { id: 'healthy', address: healthy.address },
      ],
      selection: 'priority',
      idempotent,
    });
    const client = createEchoClient('routed', { channelOverride: channel });
    try {
      const outcome = await echoUnary(client, { message: 'hi' }, { callId: 'a' });
      expect(outcome.error).toBeUndefined();
      expect(outcome.value).toMatchObject({ message: 'hi', replica: 'healthy' });
      expect(healthy.observed[0]?.previousAttempts).toBe(1);
    } finally {
      client.close();
      dying.close();
      await healthy.close();
    }
  });
});
