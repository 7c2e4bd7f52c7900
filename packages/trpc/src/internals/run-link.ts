import type { Operation, OperationLink, OperationResultEnvelope } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';

/** The `next` given to a terminating endpoint link: there is nothing after it. @internal */
export const noNext = (): never => {
  throw new Error(
    'routingLink: each endpoint link must be a terminating link (e.g. httpBatchLink)',
  );
};

/**
 * Runs `op` through one terminating link and resolves with its first
 * envelope (a query's or mutation's result); `signal` unsubscribes it.
 * @internal
 */
export function runLink<TRouter extends AnyRouter>(
  link: OperationLink<TRouter>,
  op: Operation,
  signal: AbortSignal,
): Promise<OperationResultEnvelope<unknown, unknown>> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      settled = true;
      subscription.unsubscribe();
      reject(signal.reason);
    };
    const subscription = link({ op: { ...op, signal }, next: noNext }).subscribe({
      next(envelope) {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(envelope);
      },
      error(error) {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
      complete() {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        reject(new Error(`routingLink: "${op.path}" completed without a result`));
      },
    });
    if (settled) subscription.unsubscribe();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
