import {
  checkOptions,
  type Duration,
  type ErrorVerdict,
  type KnownKeys,
  optionPath,
  optionRangeError,
  parseDuration,
  type RetryBudget,
} from '@breakwater/core';
import type { Operation, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { observable, type Unsubscribable } from '@trpc/server/observable';
import { classifyTRPCError } from './classify.js';
import { isRepeatable } from './context.js';
import { startTimer, stopTimer, type TimerHandle } from './time/timer.js';

/** Options of {@link hedgeLink}. */
export interface HedgeLinkOptions {
  /** Send a hedge when the call has been outstanding this long. */
  delayMs: Duration;
  /** Hedges per call beyond the first request. Defaults to 1. */
  maxHedges?: number;
  /** Retry budget hedges draw from (each call records a request). Defaults to none. */
  budget?: RetryBudget;
  /** Hedge mutations too (per call: `context.idempotent`). Defaults to false. */
  hedgeMutations?: boolean;
  /** A failed request whose verdict says `retry: false` ends the call at once. Defaults to `classifyTRPCError`. */
  classify?: (error: unknown, op: Operation) => ErrorVerdict;
  /** Called when a hedge is sent (`hedge` counts from 1). Defaults to none. */
  onHedge?: (event: {
    /** Procedure path of the hedged call. */
    path: string;
    /** Which hedge this is, counting from 1 (the first request is not counted). */
    hedge: number;
  }) => void;
}

/** Keys of {@link HedgeLinkOptions}. @internal */
export const HEDGE_LINK_KEYS = {
  delayMs: true,
  maxHedges: true,
  budget: true,
  hedgeMutations: true,
  classify: true,
  onHedge: true,
} as const satisfies KnownKeys<HedgeLinkOptions>;

/**
 * Tail-latency hedging for calls that are safe to repeat (queries by
 * default): when a call is still outstanding after `delayMs`, the same
 * operation is sent again; the first answer wins and the others are
 * unsubscribed. Subscriptions are never hedged.
 * @example
 * hedgeLink({ delayMs: 50, budget })
 */
export function hedgeLink<TRouter extends AnyRouter = AnyRouter>(
  options: HedgeLinkOptions,
): TRPCLink<TRouter> {
  // initialized config
  checkOptions('hedgeLink', options, HEDGE_LINK_KEYS, '', false);
  const delayMs = optionPath('', () => parseDuration('delayMs', options.delayMs), 'hedgeLink');
  const maxHedges = options.maxHedges ?? 1;
  if (!Number.isInteger(maxHedges) || maxHedges < 1) {
    throw optionRangeError(
      'maxHedges',
      `must be an integer >= 1, got ${String(maxHedges)}`,
      'hedgeLink',
    );
  }
  const classify = options.classify ?? classifyTRPCError;
  const { budget, onHedge } = options;
  const hedgeMutations = options.hedgeMutations ?? false;

  return () => {
    // initialized in app
    return ({ op, next }) => {
      // initialized for request
      if (op.type === 'subscription' || !isRepeatable(op, hedgeMutations)) return next(op);
      budget?.recordRequest();
      return observable((observer) => {
        const running = new Set<Unsubscribable>();
        let sent = 0;
        let done = false;
        let timer: TimerHandle | undefined;

        const finish = (keep?: Unsubscribable) => {
          done = true;
          stopTimer(timer);
          for (const s of running) if (s !== keep) s.unsubscribe();
          running.clear();
        };
        const schedule = () => {
          if (sent > maxHedges) return;
          timer = startTimer(delayMs, () => {
            if (done || (budget && !budget.tryRetry())) return;
            onHedge?.({ path: op.path, hedge: sent });
            send();
          });
        };
        const send = () => {
          sent++;
          let winner = false;
          let subscription: Unsubscribable | undefined;
          let failed = false;
          subscription = next(op).subscribe({
            next(envelope) {
              if (done && !winner) return;
              if (!done) {
                winner = true;
                finish(subscription);
              }
              observer.next(envelope);
            },
            error(error) {
              if (done) return;
              failed = true;
              if (subscription) running.delete(subscription);
              // A domain error is the answer; otherwise wait for the others.
              if (classify(error, op).retry === false || (running.size === 0 && sent > maxHedges)) {
                finish();
                observer.error(error as TRPCClientError<TRouter>);
              } else if (running.size === 0) {
                stopTimer(timer);
                send();
              }
            },
            complete() {
              if (winner) observer.complete();
            },
          });
          if (done) {
            if (!winner) subscription.unsubscribe();
          } else if (!failed) {
            running.add(subscription);
            schedule();
          }
        };
        send();
        return () => finish();
      });
    };
  };
}
