import { type AddressInfo, createServer } from 'node:net';
import {
  createEchoClient,
  type EchoClient,
  type GrpcChaosServer,
  type GrpcChaosServerOptions,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import type { Interceptor } from '@grpc/grpc-js';
import { afterEach } from 'vitest';
import {
  disableGrpcRetries,
  type ResilienceInterceptor,
  type ResilienceInterceptorOptions,
  resilienceInterceptor,
} from '../src/index.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** A chaos server and an Echo client through `interceptors`, both closed after the test. */
export async function echoSetup(
  interceptors: Interceptor[],
  server: GrpcChaosServerOptions = {},
): Promise<{ server: GrpcChaosServer; client: EchoClient }> {
  const s = await startGrpcChaosServer(server);
  cleanup.push(() => s.close());
  const client = createEchoClient(s.address, { ...disableGrpcRetries, interceptors });
  cleanup.push(() => client.close());
  return { server: s, client };
}

/** Every part of the standard stack off: a test turns on only the part it is about. */
export const OFF = {
  timeoutMs: false,
  attemptTimeoutMs: false,
  retry: false,
  budget: false,
  circuit: false,
  concurrency: false,
} as const satisfies ResilienceInterceptorOptions;

/** `resilienceInterceptor` with only the parts in `options` on. */
export function only(options: ResilienceInterceptorOptions): ResilienceInterceptor {
  return resilienceInterceptor({ ...OFF, ...options });
}

/** A local port nothing listens on: connecting to it is refused, so no request ever leaves. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
