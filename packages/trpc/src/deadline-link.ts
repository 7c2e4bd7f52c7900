import { DeadlineExceededError, type Duration, parseDuration } from '@breakwater/core';
import type { Operation, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import type { BreakwaterOperationContext } from './context.js';
import { aborted, refusal } from './internals/errors.js';
import { startTimer, stopTimer } from './time/timer.js';

/** Options of {@link deadlineLink}. */
export interface DeadlineLinkOptions {
  /** Budget of every query and mutation. Defaults to none (only `procedures` and `context.timeoutMs` apply). */
  timeoutMs?: Duration;
  /** Budgets per procedure path, overriding `timeoutMs`. Defaults to none. */
  procedures?: Record<string, Duration>;
  /** Computes the budget of a call (ms, or `undefined` for none); overrides the maps and `context.timeoutMs`. Defaults to none. */
  timeoutFor?: (op: Operation) => number | undefined;
}

/**
 * Gives each query and mutation a deadline and rejects the caller when it
 * passes, with a `TRPCClientError` whose `cause` is a core
 * `DeadlineExceededError` — on time even inside `httpBatchLink`, where the
 * batch's HTTP request keeps going for the other calls. The call is
 * unsubscribed below the link (the HTTP request is aborted once every call
 * in its batch has gone). A caller's `op.signal` abort also rejects at once.
 * Subscriptions are not given deadlines. Place it before `retryLink` for a
 * budget covering all attempts, after it for a per-attempt budget.
 * Per call: `context: { timeoutMs }`.
 * @example
 * deadlineLink({ timeoutMs: '2s', procedures: { 'report.build': '30s' } })
 */
export function deadlineLink<TRouter extends AnyRouter = AnyRouter>(
  options: DeadlineLinkOptions,
): TRPCLink<TRouter> {
  // initialized config
  const fallback =
    options.timeoutMs === undefined
      ? undefined
      : parseDuration('deadlineLink: timeoutMs', options.timeoutMs);
  const byPath = new Map<string, number>();
  for (const [path, d] of Object.entries(options.procedures ?? {})) {
    byPath.set(path, parseDuration(`deadlineLink: procedures["${path}"]`, d));
  }
  const timeoutFor =
    options.timeoutFor ??
    ((op: Operation) =>
      (op.context as BreakwaterOperationContext).timeoutMs ?? byPath.get(op.path) ?? fallback);

  return () => {
    // initialized in app
    return ({ op, next }) => {
      // initialized for request
      const ms = op.type === 'subscription' ? undefined : timeoutFor(op);
      if (ms === undefined || !Number.isFinite(ms)) return next(op);
      return observable((observer) => {
        const signal = op.signal;
        if (signal?.aborted) {
          observer.error(aborted(signal) as TRPCClientError<TRouter>);
          return;
        }
        let done = false;
        const end = (error: TRPCClientError<TRouter>) => {
          if (done) return;
          done = true;
          stopTimer(timer);
          signal?.removeEventListener('abort', onAbort);
          subscription.unsubscribe();
          observer.error(error);
        };
        const onAbort = () => end(aborted(signal as AbortSignal) as TRPCClientError<TRouter>);
        const timer = startTimer(Math.max(0, ms), () => {
          const cause = new DeadlineExceededError(ms, {
            message: `Deadline of ${ms} ms exceeded calling "${op.path}" (timeout)`,
          });
          end(refusal(cause) as TRPCClientError<TRouter>);
        });
        signal?.addEventListener('abort', onAbort, { once: true });
        const settle = () => {
          done = true;
          stopTimer(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        const subscription = next(op).subscribe({
          next(envelope) {
            if (!done) observer.next(envelope);
          },
          error(error) {
            if (done) return;
            settle();
            observer.error(error);
          },
          complete() {
            if (done) return;
            settle();
            observer.complete();
          },
        });
        return () => {
          settle();
          subscription.unsubscribe();
        };
      });
    };
  };
}
