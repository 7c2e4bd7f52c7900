import type { Backoff, BackoffOptions, RetryBudget, RetryBudgetOptions } from '@breakwater/core';
import { type KnownKeys, stopRefusal } from '@breakwater/core/internal';
import type { Operation, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { PART_EXTRA_KEYS } from './context.js';
import type { ResilientCall } from './internals/call.js';
import { trpcErrorType } from './internals/errors.js';
import { partLink, type StackExtras } from './resilience-link.js';

/** What `retry.onRetry` hears before each retry's wait. Carries no payload or message. */
export interface TRPCRetryEvent {
  /** Procedure path. */
  path: string;
  /** Operation type. */
  type: Operation['type'];
  /** The attempt that failed (1 = the first call). */
  attempt: number;
  /** The wait before the next attempt, in ms. */
  delayMs: number;
  /** `name` of the error the attempt failed with. */
  errorName: string;
  /** The tRPC error code (`data.code`) of that error, when the server sent one. */
  code: string | undefined;
}

/** Options of {@link retryLink}: `retry` of `resilienceLink` plus its budget, classifier and idempotency. */
export interface RetryLinkOptions extends StackExtras {
  /** Attempts per call, the first included; an integer in `[1, 10]`. Defaults to 3. */
  attempts?: number;
  /** Delay between attempts: a `Backoff` or `createBackoff` options. Defaults to exponential from 100 ms, ×2, capped at 5 s, full jitter. */
  backoff?: Backoff | BackoffOptions;
  /** Retry budget (shareable), or `createRetryBudget` options. Defaults to none. */
  budget?: RetryBudget | RetryBudgetOptions;
  /** Longest server `Retry-After` honoured, in ms; a longer one ends the retries. Defaults to 30 000. */
  maxPushbackMs?: number;
  /** Told before each retry's wait; a throwing listener is ignored. Defaults to none. */
  onRetry?: (event: TRPCRetryEvent) => void;
}

/**
 * Retries failed calls on the core attempt engine: backoff (or the server's
 * `Retry-After`, which replaces it), the retry budget, and no retry that
 * cannot start before the call's deadline. Calls safe to repeat (`idempotent`:
 * queries by default) are retried on a retryable verdict; any call is retried
 * when its request provably never left. Subscriptions resume from the last
 * tracked event id. The caller gets the last attempt's error unchanged.
 * @example
 * links: [retryLink({ attempts: 4, budget: { ratio: 0.1 } }), httpBatchLink({ url })]
 */
export function retryLink<TRouter extends AnyRouter = AnyRouter>(
  options: RetryLinkOptions = {},
): TRPCLink<TRouter> {
  return partLink('retryLink', options, RETRY_LINK_KEYS, 'retry');
}

/** Keys of {@link RetryLinkOptions}. @internal */
export const RETRY_LINK_KEYS: KnownKeys<RetryLinkOptions> = Object.assign({}, PART_EXTRA_KEYS, {
  attempts: true,
  backoff: true,
  maxPushbackMs: true,
  onRetry: true,
} as const);

/**
 * Attempt `call.started` failed with `error` (not hedging): asks the engine
 * whether and when to retry, tells `onRetry`, and schedules the next attempt.
 * @internal
 */
export function retryFailed(call: ResilientCall, error: unknown): void {
  const { stack, op } = call;
  const engine = stack.retry;
  if (engine === undefined || op.signal?.aborted) {
    call.fail(error);
    return;
  }
  const attempt = call.started;
  const delayMs = engine.afterFailure(
    attempt,
    call.previousDelayMs,
    call.judge(error),
    error,
    call.deadlineAt,
  );
  if (delayMs < 0) {
    const refused = call.tel === undefined ? undefined : stopRefusal(delayMs);
    if (refused !== undefined) call.tel?.refused(refused);
    call.fail(error);
    return;
  }
  call.previousDelayMs = delayMs;
  call.tel?.retry(attempt, delayMs, trpcErrorType(error));
  const onRetry = stack.onRetry;
  if (onRetry !== undefined) {
    const e = error as { name?: unknown; data?: { code?: unknown } | null };
    const code = e?.data?.code;
    try {
      onRetry({
        path: op.path,
        type: op.type,
        attempt,
        delayMs,
        errorName: typeof e?.name === 'string' ? e.name : 'Error',
        code: typeof code === 'string' ? code : undefined,
      });
    } catch {
      // A listener never breaks the call it listens to.
    }
  }
  call.waitThenLaunch(engine, delayMs);
}
