import { type Operation, TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import { type ClientChaosOptions, createChaosPlanner } from './plan.js';

/** Options of {@link chaosLink}. */
export interface ChaosLinkOptions extends ClientChaosOptions {
  /**
   * Builds the error of an injected failure. Defaults to a `TRPCClientError`
   * shaped like a server's `SERVICE_UNAVAILABLE` (HTTP 503) answer.
   */
  error?: (op: Operation) => unknown;
}

function serviceUnavailable(op: Operation): unknown {
  return TRPCClientError.from({
    error: {
      message: 'chaos: injected SERVICE_UNAVAILABLE',
      code: -32603,
      data: { code: 'SERVICE_UNAVAILABLE', httpStatus: 503, path: op.path },
    },
  });
}

/**
 * A tRPC link that injects faults into the caller's own chain: a share of
 * operations fails without a request being sent, and a share waits `latency`
 * first (cut short by `op.signal` or unsubscription). Put it just before the
 * terminating link to test the links above it.
 * @example
 * links: [retryLink({}), chaosLink({ errorRate: 0.3, seed: 7 }), httpBatchLink({ url })]
 */
export function chaosLink<TRouter extends AnyRouter = AnyRouter>(
  options: ChaosLinkOptions = {},
): TRPCLink<TRouter> {
  // initialized config
  const planner = createChaosPlanner(options);
  const makeError = options.error ?? serviceUnavailable;
  // initialized in app
  return () =>
    // initialized for request
    ({ op, next }) =>
      observable((observer) => {
        const plan = planner.plan(op.path);
        if (plan === undefined) return next(op).subscribe(observer);
        let inner: Unsubscribable | undefined;
        let done = false;
        const stop = new AbortController();
        const onAbort = () => stop.abort();
        op.signal?.addEventListener('abort', onAbort, { once: true });
        const proceed = () => {
          op.signal?.removeEventListener('abort', onAbort);
          if (done) return;
          if (stop.signal.aborted) {
            observer.error(TRPCClientError.from(new Error('The operation was aborted')));
          } else if (plan.fail) {
            observer.error(TRPCClientError.from(makeError(op) as Error));
          } else {
            inner = next(op).subscribe(observer);
          }
        };
        if (plan.delayMs > 0) void planner.sleep(plan.delayMs, stop.signal).then(proceed);
        else void Promise.resolve().then(proceed);
        return () => {
          done = true;
          stop.abort();
          op.signal?.removeEventListener('abort', onAbort);
          inner?.unsubscribe();
        };
      });
}
