/**
 * A's caller: one plain call per root request (no retries), with the root
 * deadline, optionally cancelled early; it records when it stopped waiting.
 */
import { createEchoClient } from '@breakwater/chaos';
import { disableGrpcRetries } from '@breakwater/grpc-js';
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { RootRecord } from '../../harness/chain-figures.js';
import { ROOT_ID_HEADER } from './hop.js';
import { type ChainRouter, wallNow } from './servers.js';
import type { ServerKind } from './service.js';

/** The root deadline A's caller gives every request, ms. */
export const ROOT_DEADLINE_MS = 1_000;

/** Sends root requests to A. */
export interface RootCaller {
  /** One root request; `cancelAfterMs`: the caller cancels it then. */
  call(rootId: string, cancelAfterMs: number | undefined): Promise<RootRecord>;
  close(): void;
}

function grpcRoot(address: string): RootCaller {
  const client = createEchoClient(address, disableGrpcRetries);
  return {
    call: (rootId, cancelAfterMs) =>
      new Promise((resolve) => {
        const metadata = new Metadata();
        metadata.set(ROOT_ID_HEADER, rootId);
        const sentAt = wallNow();
        const deadline = Date.now() + ROOT_DEADLINE_MS;
        let cancelledAt: number | undefined;
        const call = client.Unary(
          { message: 'x' },
          metadata,
          { deadline },
          (error: ServiceError | null) => {
            clearTimeout(timer);
            resolve({
              rootId,
              sentAt,
              deadline,
              stoppedAt: cancelledAt ?? wallNow(),
              ok: !error,
              gaveUp: cancelledAt !== undefined || error?.code === status.DEADLINE_EXCEEDED,
            });
          },
        );
        const timer =
          cancelAfterMs === undefined
            ? undefined
            : setTimeout(() => {
                cancelledAt = wallNow();
                call.cancel();
              }, cancelAfterMs);
      }),
    close: () => client.close(),
  };
}

function trpcRoot(url: string): RootCaller {
  const client = createTRPCClient<ChainRouter>({
    links: [
      httpLink({ url, headers: ({ op }) => ({ [ROOT_ID_HEADER]: String(op.context.rootId) }) }),
    ],
  });
  return {
    async call(rootId, cancelAfterMs) {
      const sentAt = wallNow();
      const deadline = Date.now() + ROOT_DEADLINE_MS;
      const cancel = new AbortController();
      let gaveUpAt: number | undefined;
      const giveUp = () => {
        gaveUpAt ??= wallNow();
        cancel.abort();
      };
      const deadlineTimer = setTimeout(giveUp, ROOT_DEADLINE_MS);
      const cancelTimer =
        cancelAfterMs === undefined ? undefined : setTimeout(giveUp, cancelAfterMs);
      let ok = true;
      try {
        await client.hop.query(undefined, { context: { rootId }, signal: cancel.signal });
      } catch {
        ok = false;
      } finally {
        clearTimeout(deadlineTimer);
        clearTimeout(cancelTimer);
      }
      const gaveUp = gaveUpAt !== undefined;
      return {
        rootId,
        sentAt,
        deadline,
        stoppedAt: gaveUpAt ?? wallNow(),
        ok: ok && !gaveUp,
        gaveUp,
      };
    },
    close: () => {},
  };
}

/** The caller of A, by the protocol A's server speaks. */
export const rootCaller = (server: ServerKind, address: string): RootCaller =>
  server === 'tRPC' ? trpcRoot(address) : grpcRoot(address);
