import { fixedRandom } from '@breakwater/core/time';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { ClientError, createChannel, createClientFactory, Status } from 'nice-grpc';
import { afterEach, describe, expect, it } from 'vitest';
import { ECHO_SERVICE, loadEchoPackageDefinition } from '../grpc/echo-proto.js';
import { CALL_ID_HEADER, type GrpcChaosServer, startGrpcChaosServer } from '../grpc/server.js';
import { chaosMiddleware } from './nice-grpc-middleware.js';

const definition = loadEchoPackageDefinition()[ECHO_SERVICE] as unknown as ServiceDefinition;
const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

async function setup(options: Parameters<typeof chaosMiddleware>[0]) {
  const server: GrpcChaosServer = await startGrpcChaosServer();
  open.push(server);
  const channel = createChannel(server.address);
  open.push(channel);
  const client = createClientFactory().use(chaosMiddleware(options)).create(definition, channel);
  // The generated grpc-js definition gives loose method types; the echo shape is known.
  const unary = (client as unknown as Record<string, unknown>).Unary as (
    request: { message: string },
    options?: { signal?: AbortSignal; metadata?: unknown },
  ) => Promise<{ message: string }>;
  return { server, unary };
}

describe('chaosMiddleware', () => {
  it('throws a ClientError with the chosen status without reaching the server', async () => {
    const { server, unary } = await setup({
      errorRate: 1,
      status: Status.UNAVAILABLE,
      random: fixedRandom(0),
    });
    const error = await unary({ message: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).code).toBe(Status.UNAVAILABLE);
    expect((error as ClientError).path).toBe(`/${ECHO_SERVICE}/Unary`);
    expect(server.total()).toBe(0);
  });

  it('fails about errorRate of calls; the rest reach the server', async () => {
    const { server, unary } = await setup({ errorRate: 0.3, seed: 5 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 300 }, (_, i) => unary({ message: String(i) })),
    );
    const failed = outcomes.filter((o) => o.status === 'rejected').length;
    expect(failed).toBeGreaterThan(55);
    expect(failed).toBeLessThan(125);
    expect(server.total()).toBe(300 - failed);
  });

  it('delays calls, and an abort during the delay rejects at once without a server call', async () => {
    const { server, unary } = await setup({ latency: { kind: 'fixed', ms: 50 } });
    const started = performance.now();
    expect((await unary({ message: 'late' })).message).toBe('late');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(server.total()).toBe(1);

    const slow = await setup({ latency: { kind: 'fixed', ms: 5_000 } });
    const abort = new AbortController();
    const pending = slow.unary({ message: 'x' }, { signal: abort.signal });
    setTimeout(() => abort.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(slow.server.total()).toBe(0);
    expect(CALL_ID_HEADER).toBe('x-call-id');
  });
});
