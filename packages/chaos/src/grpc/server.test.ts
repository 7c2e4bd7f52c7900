import {
  credentials,
  type GrpcObject,
  loadPackageDefinition,
  Metadata,
  type ServiceClientConstructor,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { afterEach, describe, expect, it } from 'vitest';
import { expectSameDrawsPerCall } from '../test-helpers/same-draws.js';
import { echoBidi, echoServerStream, echoUnary } from './echo-calls.js';
import { createEchoClient, type EchoClient } from './echo-client.js';
import { ECHO_METHODS, loadEchoPackageDefinition } from './echo-proto.js';
import { type GrpcChaosServer, startGrpcChaosServer } from './server.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setup(options: Parameters<typeof startGrpcChaosServer>[0] = {}) {
  const server = await startGrpcChaosServer(options);
  cleanup.push(() => server.close());
  const client = createEchoClient(server.address);
  cleanup.push(() => client.close());
  return { server, client };
}

function quantile(values: number[], q: number): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

describe('startGrpcChaosServer', () => {
  it('echoes and records call id, previous attempts and the deadline', async () => {
    const { server, client } = await setup({ replica: 'r-a' });
    const md = new Metadata();
    md.set('x-call-id', 'c1');
    md.set('grpc-previous-rpc-attempts', '2');
    const deadline = Date.now() + 5_000;
    const value = await new Promise((resolve, reject) =>
      client.Unary({ message: 'hi' }, md, { deadline }, (e, v) => (e ? reject(e) : resolve(v))),
    );
    expect(value).toMatchObject({ message: 'hi', replica: 'r-a', attempt: 1 });
    const seen = server.observed[0];
    expect(seen).toMatchObject({
      method: 'Unary',
      callId: 'c1',
      previousAttempts: 2,
      outcome: 'OK',
      replica: 'r-a',
    });
    expect(seen?.deadlineRemainingMs).toBeGreaterThan(4_000);
    expect(seen?.deadlineRemainingMs).toBeLessThanOrEqual(5_000);
    // The server derives its deadline from grpc-timeout on arrival, so it is
    // later than the client's by the transit time: a few ms, but 79 ms was seen
    // on a 2-core host at load 10. A unit mix-up (s vs ms) would be off by ~5 s.
    expect(Math.abs((seen?.deadline ?? 0) - deadline)).toBeLessThan(500);
  });

  it('fails the first k attempts of each call id, then answers', async () => {
    const { server, client } = await setup({
      faults: [{ firstAttempts: 2, status: status.UNAVAILABLE }],
    });
    const codes = [];
    for (let i = 0; i < 3; i++)
      codes.push((await echoUnary(client, { message: 'x' }, { callId: 'k' })).error?.code);
    expect(codes).toEqual([status.UNAVAILABLE, status.UNAVAILABLE, undefined]);
    expect(server.attempts('k')).toBe(3);
    expect((await echoUnary(client, {}, { callId: 'other' })).error?.code).toBe(status.UNAVAILABLE);
  });

  it('fails 30% of 1000 calls within tolerance', async () => {
    const { server, client } = await setup({
      seed: 11,
      faults: [{ rate: 0.3, status: status.UNAVAILABLE }],
    });
    let failed = 0;
    for (let batch = 0; batch < 10; batch++) {
      const outcomes = await Promise.all(
        Array.from({ length: 100 }, () => echoUnary(client, { message: 'x' })),
      );
      failed += outcomes.filter((o) => o.error?.code === status.UNAVAILABLE).length;
    }
    expect(server.total()).toBe(1000);
    expect(failed).toBeGreaterThan(255);
    expect(failed).toBeLessThan(345);
  });

  it('gives every client the same faults for the same call index and attempt, and a retry its own draw', async () => {
    const { server, client } = await setup({
      seed: 5,
      faults: [{ rate: 0.5, status: status.UNAVAILABLE }],
    });
    const failedOf = async (lane: string) => {
      const out = await Promise.all(
        Array.from({ length: 100 }, (_, i) => echoUnary(client, {}, { callId: `${lane}-${i}` })),
      );
      return out.map((o) => o.error?.code === status.UNAVAILABLE);
    };
    await expectSameDrawsPerCall(['grpc/none', 'grpc/breakwater'], failedOf, server.attempts);
  });

  it('sends the pushback trailer with RESOURCE_EXHAUSTED', async () => {
    const { client } = await setup({
      faults: [{ status: status.RESOURCE_EXHAUSTED, pushbackMs: 300 }],
    });
    const outcome = await echoUnary(client, {});
    expect(outcome.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(outcome.error?.metadata.get('grpc-retry-pushback-ms')).toEqual(['300']);
  });

  it('adds latency with the configured distribution', async () => {
    const { server, client } = await setup();
    await echoUnary(client, {}); // connect first, so connection set-up is not measured
    server.setFaults([{ latency: { kind: 'uniform', minMs: 50, maxMs: 150 } }]);
    const times = await Promise.all(
      Array.from({ length: 60 }, async () => {
        const t0 = performance.now();
        await echoUnary(client, {});
        return performance.now() - t0;
      }),
    );
    expect(Math.min(...times)).toBeGreaterThanOrEqual(49);
    expect(quantile(times, 0.5)).toBeGreaterThan(75);
    // Loose upper bound: timers run late on a loaded machine; exact quantiles are checked in faults.test.ts.
    expect(quantile(times, 0.5)).toBeLessThan(600);
  });

  it('hangs until the client deadline, recording the cancellation', async () => {
    const { server, client } = await setup({ faults: [{ hang: true }] });
    const t0 = performance.now();
    const outcome = await echoUnary(client, {}, { callOptions: { deadline: Date.now() + 100 } });
    expect(outcome.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(performance.now() - t0).toBeLessThan(1_000);
    await new Promise((r) => setImmediate(r));
    await expect.poll(() => server.observed[0]?.outcome).toBe('CANCELLED');
  });

  it('fails a response stream after N messages', async () => {
    const { server, client } = await setup({
      faults: [{ methods: ['ServerStream'], failAfterMessages: 2, status: status.UNAVAILABLE }],
    });
    const { messages, error } = await echoServerStream(client, { message: 's', count: 5 });
    expect(messages.map((m) => m.index)).toEqual([0, 1]);
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(server.observed[0]?.method).toBe('ServerStream');
    const healthy = await echoUnary(client, { message: 'u' });
    expect(healthy.ok).toBe(true);
  });

  it('dies after sending a unary response message, before the status', async () => {
    const { server, client } = await setup({
      faults: [{ firstAttempts: 1, dieAfterMessage: true }],
    });
    const outcome = await echoUnary(client, { message: 'x' }, { callId: 'd1' });
    // The message arrived but no status did: grpc-js reports the dropped connection.
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    expect(server.listening).toBe(false);
    expect(server.observed[0]?.outcome).toBe('DIED_AFTER_MESSAGE');
  });

  it('resets the connection under a unary call it took, and keeps serving', async () => {
    const { server, client } = await setup({
      faults: [{ firstAttempts: 1, resetAfterRequest: true }],
    });
    const outcome = await echoUnary(client, { message: 'x' }, { callId: 'r1' });
    // No answer came: grpc-js reports the dropped connection.
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    expect(outcome.error?.details).not.toMatch(/No connection established/);
    expect(server.observed[0]?.outcome).toBe('RESET');
    const again = await echoUnary(client, { message: 'x' }, { callId: 'r1' });
    expect(again.value?.attempt).toBe(2);
  });

  it('serves client and bidi streams', async () => {
    const { client } = await setup();
    const joined = await new Promise((resolve, reject) => {
      const call = client.ClientStream(new Metadata(), (e, v) => (e ? reject(e) : resolve(v)));
      call.write({ message: 'a' });
      call.write({ message: 'b' });
      call.end();
    });
    expect(joined).toMatchObject({ message: 'a,b', index: 2 });
    const echoed = await echoBidi(client, ['x', 'y']);
    expect(echoed).toEqual(['x', 'y']);
  });

  it('answers health checks and can turn NOT_SERVING', async () => {
    const { server } = await setup();
    const root = loadPackageDefinition(loadSync(healthProtoPath, { enums: String }));
    const Health = (((root.grpc as GrpcObject).health as GrpcObject).v1 as GrpcObject)
      .Health as ServiceClientConstructor;
    const health = new Health(server.address, credentials.createInsecure());
    cleanup.push(() => health.close());
    const check = () =>
      new Promise<string>((resolve, reject) =>
        health.Check!({ service: '' }, (e: Error | null, v: { status: string }) =>
          e ? reject(e) : resolve(v.status),
        ),
      );
    expect(await check()).toBe('SERVING');
    server.setHealth('NOT_SERVING');
    expect(await check()).toBe('NOT_SERVING');
  });

  it('stops listening and restarts on the same port', async () => {
    const { server, client } = await setup();
    expect((await echoUnary(client, {})).ok).toBe(true);
    const port = server.port;
    await server.stop();
    expect(server.listening).toBe(false);
    const down = await echoUnary(client, {}, { callOptions: { deadline: Date.now() + 2_000 } });
    expect(down.error?.code).toBe(status.UNAVAILABLE);
    await server.restart();
    expect(server.port).toBe(port);
    await expect.poll(async () => (await echoUnary(client, {})).ok, { timeout: 5_000 }).toBe(true);
    // Only answered calls reached the application; the call made while stopped never did.
    expect(server.observed.map((o) => o.outcome)).toEqual(['OK', 'OK']);
  });

  it('ships method options so adapters can tell safe methods', () => {
    const def = loadEchoPackageDefinition()['breakwater.chaos.v1.Echo'] as Record<
      string,
      { path: string; options: { idempotency_level: string } }
    >;
    const levels = Object.fromEntries(
      Object.values(def).map((m) => [m.path, m.options.idempotency_level]),
    );
    expect(levels[ECHO_METHODS.unary]).toBe('NO_SIDE_EFFECTS');
    expect(levels[ECHO_METHODS.unaryUnsafe]).toBe('IDEMPOTENCY_UNKNOWN');
  });
});

export type { EchoClient, GrpcChaosServer };
