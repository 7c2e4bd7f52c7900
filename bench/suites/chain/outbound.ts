/**
 * The clients a chain service calls its next hop with: the peers' (grpc-js
 * with a service-config `retryPolicy`, tRPC with `retryLink`) and
 * Breakwater's three adapters with the standard stack. Every one has the
 * same own deadline per call (`HOP_TIMEOUT_MS`) and 3 attempts; none is
 * handed the inbound call — Breakwater's inherit it from the server binding.
 */
import { createEchoClient, ECHO_METHODS, loadEchoPackageDefinition } from '@breakwater/chaos';
import { disableGrpcRetries, idempotentMethods, resilienceInterceptor } from '@breakwater/grpc-js';
import { resilienceMiddleware } from '@breakwater/nice-grpc';
import { breakwaterHeaders, createStatusPreservingFetch, resilienceLink } from '@breakwater/trpc';
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { createTRPCClient, httpLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import {
  ClientError,
  createChannel,
  createClientFactory,
  Metadata as NiceMetadata,
} from 'nice-grpc';
import { grpcServiceConfig, type NiceEcho, niceDefinition, peerRetryLink } from '../clients.js';
import { type Downstream, type FailureKind, HopFailure, ROOT_ID_HEADER } from './hop.js';
import type { ChainRouter } from './servers.js';

/** Every hop's own deadline per call, ms (longer than the root's: only propagation can shorten it). */
export const HOP_TIMEOUT_MS = 10_000;

/** The clients a service can call its next hop with. */
export type ClientKind =
  | 'grpc-js retryPolicy'
  | 'tRPC retryLink'
  | 'Breakwater grpc-js'
  | 'Breakwater nice-grpc'
  | 'Breakwater tRPC';

function grpcKind(code: number | undefined): FailureKind {
  if (code === status.DEADLINE_EXCEEDED) return 'deadline';
  if (code === status.CANCELLED) return 'cancelled';
  return 'unavailable';
}

function trpcKind(error: unknown): FailureKind {
  const httpStatus = error instanceof TRPCClientError ? error.data?.httpStatus : undefined;
  if (httpStatus === 408 || httpStatus === 504) return 'deadline';
  if (httpStatus === 499) return 'cancelled';
  const cause = (error as { cause?: { name?: string } })?.cause?.name;
  if (httpStatus === undefined && (cause === 'AbortError' || cause === 'TimeoutError'))
    return 'deadline';
  return 'unavailable';
}

const failed = (kind: FailureKind, error: unknown) =>
  new HopFailure(kind, error instanceof Error ? error.message : String(error));

/** A grpc-js Echo client over `options`, with the hop's own deadline on every call. */
function grpcJsDownstream(
  address: string,
  options: Parameters<typeof createEchoClient>[1],
): Downstream {
  const client = createEchoClient(address, options);
  return {
    call: (rootId) =>
      new Promise((resolve, reject) => {
        const metadata = new Metadata();
        metadata.set(ROOT_ID_HEADER, rootId);
        client.Unary(
          { message: 'x' },
          metadata,
          { deadline: Date.now() + HOP_TIMEOUT_MS },
          (error: ServiceError | null) =>
            error ? reject(failed(grpcKind(error.code), error)) : resolve(),
        );
      }),
    close: () => client.close(),
  };
}

function niceGrpcDownstream(address: string): Downstream {
  const channel = createChannel(address, undefined, disableGrpcRetries);
  const middleware = resilienceMiddleware({
    idempotent: [ECHO_METHODS.unary],
    timeoutMs: HOP_TIMEOUT_MS,
  });
  const client = createClientFactory()
    .use(middleware)
    .create(niceDefinition(), channel) as unknown as NiceEcho;
  return {
    call: async (rootId) => {
      try {
        await client.Unary(
          { message: 'x' },
          { metadata: NiceMetadata({ [ROOT_ID_HEADER]: rootId }) },
        );
      } catch (error) {
        throw failed(grpcKind(error instanceof ClientError ? error.code : undefined), error);
      }
    },
    close: () => channel.close(),
  };
}

/**
 * The terminating link of every tRPC hop client: one request per call, the
 * root id as a header; Breakwater's also sends `breakwaterHeaders` (deadline,
 * attempt, criticality) and keeps HTTP statuses.
 */
function terminal(url: string, breakwater: boolean) {
  return httpLink<ChainRouter>({
    url,
    ...(breakwater ? { fetch: createStatusPreservingFetch() } : {}),
    headers: ({ op }) => ({
      ...(breakwater ? breakwaterHeaders({ op }) : {}),
      [ROOT_ID_HEADER]: String(op.context.rootId),
    }),
  });
}

function trpcDownstream(links: TRPCLink<ChainRouter>[], ownSignal: boolean): Downstream {
  const client = createTRPCClient<ChainRouter>({ links });
  return {
    call: async (rootId) => {
      try {
        await client.hop.query(undefined, {
          context: { rootId },
          // The peer's own deadline is a signal; Breakwater's is its `timeoutMs`.
          ...(ownSignal ? { signal: AbortSignal.timeout(HOP_TIMEOUT_MS) } : {}),
        });
      } catch (error) {
        throw failed(trpcKind(error), error);
      }
    },
    close: () => {},
  };
}

/** The client of `kind` to the next hop at `address` (gRPC `host:port` or tRPC base URL). */
export function downstream(kind: ClientKind, address: string): Downstream {
  switch (kind) {
    case 'grpc-js retryPolicy':
      return grpcJsDownstream(address, grpcServiceConfig({ retry: true }));
    case 'Breakwater grpc-js':
      return grpcJsDownstream(address, {
        ...disableGrpcRetries,
        interceptors: [
          resilienceInterceptor({
            idempotent: idempotentMethods(loadEchoPackageDefinition()),
            timeoutMs: HOP_TIMEOUT_MS,
          }),
        ],
      });
    case 'Breakwater nice-grpc':
      return niceGrpcDownstream(address);
    case 'tRPC retryLink':
      return trpcDownstream([peerRetryLink<ChainRouter>(), terminal(address, false)], true);
    case 'Breakwater tRPC':
      return trpcDownstream(
        [resilienceLink<ChainRouter>({ timeoutMs: HOP_TIMEOUT_MS }), terminal(address, true)],
        false,
      );
  }
}
