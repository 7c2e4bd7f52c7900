import {
  createEchoClient,
  ECHO_SERVICE,
  type EchoClient,
  type EchoRequest,
  type EchoResponse,
  echoUnary,
  loadEchoPackageDefinition,
} from '@breakwater/chaos';
import {
  type ClientOptions,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createRoutingChannel, idempotentMethods, resilienceInterceptor } from '../src/index.js';
import { closedPort } from './helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/**
 * A middle tier: every call runs its side effect (counted), then asks its own backend, which
 * is down, and forwards the backend's grpc-js error as is (`callback(err)`): a trailers-only
 * UNAVAILABLE whose text is grpc-js's "No connection established. Last error: … ECONNREFUSED".
 */
async function startMiddleTier(): Promise<{ address: string; executions(): number }> {
  const backend = createEchoClient(`127.0.0.1:${await closedPort()}`);
  let executions = 0;
  const forward = (
    call: ServerUnaryCall<EchoRequest, EchoResponse>,
    done: sendUnaryData<never>,
  ) => {
    executions++;
    backend.UnaryUnsafe(call.request, new Metadata(), (error: ServiceError | null) => done(error));
  };
  const unused = (call: { destroy?: () => void }) => call.destroy?.();
  const server = new Server();
  const service = loadEchoPackageDefinition()[ECHO_SERVICE] as ServiceDefinition;
  server.addService(service, {
    Unary: forward,
    UnaryUnsafe: forward,
    ServerStream: unused,
    ClientStream: unused,
    Bidi: unused,
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  cleanup.push(() => {
    backend.close();
    server.forceShutdown();
  });
  return { address: `127.0.0.1:${port}`, executions: () => executions };
}

function client(address: string, options: ClientOptions): EchoClient {
  const c = createEchoClient(address, options);
  cleanup.push(() => c.close());
  return c;
}

describe('a server that forwards grpc-js’s "No connection established" text', () => {
  it('resilienceInterceptor executes a non-idempotent call once: a server answered, whatever its text', async () => {
    const tier = await startMiddleTier();
    const c = client(tier.address, { interceptors: [resilienceInterceptor({ idempotent })] });
    const outcome = await echoUnary(c, {}, { method: 'UnaryUnsafe' });
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    expect(outcome.error?.details).toMatch(/^No connection established.*ECONNREFUSED/);
    await new Promise((r) => setTimeout(r, 100));
    expect(tier.executions()).toBe(1);
  });

  it('the routing channel executes a non-idempotent call once over all its targets', async () => {
    const tiers = [await startMiddleTier(), await startMiddleTier()];
    const channel = createRoutingChannel({
      targets: tiers.map((t, i) => ({ id: `tier-${i + 1}`, address: t.address })),
      idempotent,
      protection: { retry: { attempts: 3, backoff: { baseDelayMs: 5, jitter: 'none' } } },
    });
    cleanup.push(() => channel.close());
    const c = client('routed', { channelOverride: channel });
    const outcome = await echoUnary(c, {}, { method: 'UnaryUnsafe' });
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    await new Promise((r) => setTimeout(r, 100));
    expect(tiers.reduce((sum, t) => sum + t.executions(), 0)).toBe(1);
  });
});
