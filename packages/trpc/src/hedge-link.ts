import type { RetryBudget, RetryBudgetOptions } from '@breakwater/core';
import { type KnownKeys, stopRefusal } from '@breakwater/core/internal';
import type { TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { PART_EXTRA_KEYS } from './context.js';
import type { Attempt, ResilientCall } from './internals/call.js';
import { trpcErrorType } from './internals/errors.js';
import { partLink, type StackExtras } from './resilience-link.js';

/** Options of {@link hedgeLink}: `hedge` of `resilienceLink` plus its budget, classifier and idempotency. */
export interface HedgeLinkOptions extends StackExtras {
  /** Start another attempt when the latest has been outstanding this long, in ms (>= 0). Required. */
  delayMs: number;
  /** Attempts per call, the first included; an integer in `[2, 10]`. Defaults to 2. */
  attempts?: number;
  /** Retry budget hedges draw from (shareable), or `createRetryBudget` options. Defaults to none. */
  budget?: RetryBudget | RetryBudgetOptions;
}

/**
 * Tail-latency hedging on the core attempt engine for calls safe to repeat
 * (`idempotent`: queries by default): when the latest attempt is still
 * outstanding after `delayMs`, another is sent, within `attempts` and the
 * budget; the first answer wins and the others are unsubscribed. A failed
 * attempt is replaced at once (after `Retry-After`, never a backoff); a
 * verdict of `retry: false` (a domain error) is the answer. Subscriptions
 * are never hedged.
 * @example
 * hedgeLink({ delayMs: 50, budget: { ratio: 0.1 } })
 */
export function hedgeLink<TRouter extends AnyRouter = AnyRouter>(
  options: HedgeLinkOptions,
): TRPCLink<TRouter> {
  return partLink('hedgeLink', options, HEDGE_LINK_KEYS, 'hedge');
}

/** Keys of {@link HedgeLinkOptions}. @internal */
export const HEDGE_LINK_KEYS: KnownKeys<HedgeLinkOptions> = Object.assign({}, PART_EXTRA_KEYS, {
  delayMs: true,
  attempts: true,
} as const);

/** A hedged call started an attempt: arms the timer for the next one, if any may follow. @internal */
export function hedgeTimer(call: ResilientCall): void {
  const engine = call.stack.hedge;
  if (engine === undefined || call.started >= engine.attempts) return;
  call.stopWaiting();
  const waiting = new AbortController();
  call.waiting = waiting;
  engine.schedule(
    engine.hedgeDelayMs ?? 0,
    () => {
      call.waiting = undefined;
      if (call.done) return;
      if (engine.mayHedge(call.started, call.deadlineAt)) call.launch(true);
      else if (engine.clock() < call.deadlineAt) call.tel?.refused('budget-exhausted');
    },
    waiting.signal,
  );
}

/**
 * An attempt of a hedged call failed: a final verdict ends the call; with
 * others running the call waits for them; else the engine decides on a
 * replacement (after pushback only).
 * @internal
 */
export function hedgeFailed(call: ResilientCall, attempt: Attempt, error: unknown): void {
  const running = call.running as Attempt[];
  running.splice(running.indexOf(attempt), 1);
  const verdict = call.judge(error);
  if (verdict.retry === false) {
    call.fail(error);
    return;
  }
  if (running.length > 0) return;
  const engine = call.stack.hedge;
  const delayMs =
    engine === undefined || call.op.signal?.aborted
      ? -1
      : engine.afterFailure(call.started, 0, verdict, error, call.deadlineAt);
  if (delayMs < 0 || engine === undefined) {
    const refused = call.tel === undefined ? undefined : stopRefusal(delayMs);
    if (refused !== undefined) call.tel?.refused(refused);
    call.fail(error);
    return;
  }
  call.tel?.retry(call.started, delayMs, trpcErrorType(error));
  call.waitThenLaunch(engine, delayMs);
}
