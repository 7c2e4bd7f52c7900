import {
  type Backoff,
  type BackoffOptions,
  createBackoff,
  type ErrorVerdict,
  type RetryBudget,
  type Sleep,
  systemSleep,
} from '@breakwater/core';
import type { Operation, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import { classifyTRPCError } from './classify.js';
import { isRepeatable } from './context.js';
import { aborted } from './internals/errors.js';
import { inputAfterEvent } from './internals/tracked-input.js';

/** Passed to `onRetry` before each backoff sleep. Carries no payload. */
export interface TRPCRetryEvent {
  /** Procedure path. */
  path: string;
  /** Operation type. */
  type: Operation['type'];
  /** The attempt that just failed (1 = the first call). */
  attempt: number;
  /** How long the link waits before the next attempt. */
  delayMs: number;
  /** The error of the failed attempt. */
  error: TRPCClientError<AnyRouter>;
}

/** Options of {@link retryLink}. */
export interface RetryLinkOptions {
  /** Attempts per call, the first included. Defaults to `backoff.budgetedAttempts`, else 3. */
  attempts?: number;
  /** Delay schedule (a core `Backoff` or its options). Defaults to exponential from 100 ms, factor 2, max 5 s, additive jitter. */
  backoff?: Backoff | BackoffOptions;
  /** Retry budget shared with other callers; a refused retry ends the call. Defaults to none. */
  budget?: RetryBudget;
  /** Maps a failed attempt's error to a verdict. Defaults to `classifyTRPCError`. */
  classify?: (error: unknown, op: Operation) => ErrorVerdict;
  /** Retry mutations too (per call: `context.idempotent`). Defaults to false. */
  retryMutations?: boolean;
  /** A server `Retry-After` longer than this ends the call instead of waiting. Defaults to 30 000. */
  maxRetryAfterMs?: number;
  /** Resume subscriptions after a failure, from the last tracked event id. Defaults to true. */
  resumeSubscriptions?: boolean;
  /** Called before each backoff sleep. Defaults to none. */
  onRetry?: (event: TRPCRetryEvent) => void;
  /** How backoff waits. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

const DEFAULT_BACKOFF: BackoffOptions = {
  baseDelayMs: 100,
  strategy: 'exponential',
  maxDelayMs: 5000,
};

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`retryLink: ${name} must be an integer >= 1, got ${String(value)}`);
  }
  return value;
}

/**
 * Retries failed calls with core backoff (jittered), an optional shared
 * retry budget and `Retry-After` pushback, waiting in abort-aware sleeps:
 * when the caller's `op.signal` aborts during a backoff, the call rejects at
 * once and nothing more is sent. Queries are retried by default, mutations
 * only with `retryMutations` or `context.idempotent`. Subscriptions resume
 * from the last tracked event id. The caller gets the last error unchanged.
 * @example
 * links: [retryLink({ attempts: 4, budget }), httpBatchLink({ url })]
 */
export function retryLink<TRouter extends AnyRouter = AnyRouter>(
  options: RetryLinkOptions = {},
): TRPCLink<TRouter> {
  // initialized config
  const given = options.backoff;
  const backoff =
    given && typeof (given as Backoff).delayFor === 'function'
      ? (given as Backoff)
      : createBackoff((given as BackoffOptions | undefined) ?? DEFAULT_BACKOFF);
  const attempts = positiveInteger('attempts', options.attempts ?? backoff.budgetedAttempts ?? 3);
  const classify = options.classify ?? classifyTRPCError;
  const retryMutations = options.retryMutations ?? false;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  const resume = options.resumeSubscriptions ?? true;
  const { budget, onRetry } = options;
  const sleep = options.sleep ?? systemSleep;

  return () => {
    // initialized in app
    return ({ op, next }) => {
      // initialized for request
      budget?.recordRequest();
      const isSubscription = op.type === 'subscription';
      if (attempts === 1 || (isSubscription ? !resume : !isRepeatable(op, retryMutations))) {
        return next(op);
      }
      return observable((observer) => {
        let attempt = 1;
        let previousDelay: number | undefined;
        let done = false;
        let current: Unsubscribable | undefined;
        let sleeper: AbortController | undefined;
        let lastEventId: string | undefined;

        const fail = (error: TRPCClientError<TRouter>) => {
          done = true;
          observer.error(error);
        };

        const retryDelay = (error: TRPCClientError<TRouter>): number | undefined => {
          const verdict = classify(error, op);
          // A stream that died without a server error is a transport failure: resume it.
          const transport =
            isSubscription && error.shape == null && verdict.countForCircuit !== false;
          if (verdict.retry === false && !transport) return undefined;
          if (attempt >= attempts || op.signal?.aborted) return undefined;
          let delay = backoff.delayFor(attempt, previousDelay);
          if (verdict.retryAfterMs !== undefined) {
            if (verdict.retryAfterMs > maxRetryAfterMs) return undefined;
            delay = Math.max(delay, verdict.retryAfterMs);
          }
          if (budget && !budget.tryRetry()) return undefined;
          return delay;
        };

        const start = () => {
          const attemptOp: Operation =
            lastEventId === undefined
              ? op
              : { ...op, input: inputAfterEvent(op.input, lastEventId) };
          const subscription = next(attemptOp).subscribe({
            next(envelope) {
              const result = envelope.result as { type?: string; id?: string };
              if (isSubscription && (!result.type || result.type === 'data') && result.id) {
                lastEventId = result.id;
                // A resumed stream that delivers again has recovered: its retries start over.
                attempt = 1;
              }
              observer.next(envelope);
            },
            error(error) {
              if (done) return;
              current = undefined;
              const delay = retryDelay(error);
              if (delay === undefined) return fail(error);
              onRetry?.({ path: op.path, type: op.type, attempt, delayMs: delay, error });
              attempt++;
              previousDelay = delay;
              wait(delay, error);
            },
            complete() {
              done = true;
              observer.complete();
            },
          });
          // An attempt that failed synchronously has already been handled.
          if (done) subscription.unsubscribe();
          else if (sleeper === undefined) current = subscription;
        };

        const wait = (delay: number, error: TRPCClientError<TRouter>) => {
          const ac = new AbortController();
          sleeper = ac;
          const signal = op.signal;
          const onAbort = () => ac.abort();
          signal?.addEventListener('abort', onAbort, { once: true });
          const resumeAfterSleep = () => {
            signal?.removeEventListener('abort', onAbort);
            sleeper = undefined;
            if (done) return;
            if (signal?.aborted) return fail(aborted(signal) as TRPCClientError<TRouter>);
            start();
          };
          sleep(delay, ac.signal).then(resumeAfterSleep, () => {
            signal?.removeEventListener('abort', onAbort);
            if (!done) fail(error);
          });
        };

        start();
        return () => {
          done = true;
          current?.unsubscribe();
          sleeper?.abort();
        };
      });
    };
  };
}
