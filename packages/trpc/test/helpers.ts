import {
  type ChaosTrpcRouter,
  type ChaosTrpcServer,
  type ChaosTrpcServerOptions,
  createChaosTrpcServer,
} from '@breakwater/chaos';
import { createTRPCClient, httpBatchLink, type TRPCLink } from '@trpc/client';
import { afterEach } from 'vitest';
import { createStatusPreservingFetch } from '../src/index.js';

const open: ChaosTrpcServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A chaos tRPC server on 127.0.0.1:0, closed after the test. */
export async function chaos(options: ChaosTrpcServerOptions = {}): Promise<ChaosTrpcServer> {
  const server = await createChaosTrpcServer(options);
  open.push(server);
  return server;
}

/**
 * The terminating link tests use: httpBatchLink with the status-preserving
 * fetch, sending `context.callId` as `x-call-id` so the server counts attempts per call.
 */
export function batchLink(url: string, options: { preserveStatus?: boolean } = {}) {
  return httpBatchLink<ChaosTrpcRouter>({
    url,
    ...(options.preserveStatus === false ? {} : { fetch: createStatusPreservingFetch() }),
    headers: ({ opList }): Record<string, string> => {
      const id = opList[0].context.callId;
      return typeof id === 'string' ? { 'x-call-id': id } : {};
    },
  });
}

/** A typed client over `links`. */
export function clientOf(links: TRPCLink<ChaosTrpcRouter>[]) {
  return createTRPCClient<ChaosTrpcRouter>({ links });
}

/** Settles `p` into its error (or throws if it resolved). */
export async function errorOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/**
 * One batch of three queries through `links` over a new chaos server: `slow`
 * (800 ms, with `slowContext`) beside two fast `echo`s. Returns the echoes' values, the slow
 * call's error, when it settled (ms after the batch started) and the server.
 */
export async function slowCallInBatch(
  links: (url: string) => TRPCLink<ChaosTrpcRouter>[],
  slowContext: Record<string, unknown> = {},
) {
  const server = await chaos();
  const client = clientOf(links(server.url));
  const started = performance.now();
  let slowSettledAt = 0;
  const slow = errorOf(client.slow.query({ ms: 800 }, { context: slowContext })).finally(() => {
    slowSettledAt = performance.now() - started;
  });
  const [a, b] = await Promise.all([client.echo.query('a'), client.echo.query('b')]);
  const error = await slow;
  return { values: [a.value, b.value], error, slowSettledAt, server };
}
