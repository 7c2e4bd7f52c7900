import {
  checkOptions,
  DeadlineExceededError,
  type Duration,
  type KnownKeys,
  optionPath,
  parseDuration,
} from '@breakwater/core';
import type { Operation, OperationResultEnvelope, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import {
  type Observable,
  type Observer,
  observable,
  type Unsubscribable,
} from '@trpc/server/observable';
import type { BreakwaterOperationContext } from './context.js';
import { aborted, refusal } from './internals/errors.js';
import { startTimerWith, stopTimer, type TimerHandle } from './time/timer.js';

/** Options of {@link deadlineLink}. */
export interface DeadlineLinkOptions {
  /** Budget of every query and mutation. Defaults to none (only `procedures` and `context.timeoutMs` apply). */
  timeoutMs?: Duration;
  /** Budgets per procedure path, overriding `timeoutMs`. Defaults to none. */
  procedures?: Record<string, Duration>;
  /** Computes the budget of a call (ms, or `undefined` for none); overrides the maps and `context.timeoutMs`. Defaults to none. */
  timeoutFor?: (op: Operation) => number | undefined;
}

/** Keys of {@link DeadlineLinkOptions}. @internal */
export const DEADLINE_LINK_KEYS = {
  timeoutMs: true,
  procedures: true,
  timeoutFor: true,
} as const satisfies KnownKeys<DeadlineLinkOptions>;

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
  const timeoutFor = resolveTimeoutFor(options);

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
        const call = new DeadlineCall(observer as Observer<Envelope, unknown>, op, ms);
        call.start(next(op));
        return call;
      });
    };
  };
}

/** The budget (ms) of each call under {@link DeadlineLinkOptions}, validated once. @internal */
export function resolveTimeoutFor(
  options: DeadlineLinkOptions,
): (op: Operation) => number | undefined {
  const { fallback, byPath } = optionPath('', () => parseDeadlines(options), 'deadlineLink');
  return (
    options.timeoutFor ??
    ((op: Operation) =>
      (op.context as BreakwaterOperationContext).timeoutMs ?? byPath.get(op.path) ?? fallback)
  );
}

function parseDeadlines(options: DeadlineLinkOptions) {
  checkOptions(undefined, options, DEADLINE_LINK_KEYS, '', false);
  const fallback =
    options.timeoutMs === undefined ? undefined : parseDuration('timeoutMs', options.timeoutMs);
  const byPath = new Map<string, number>();
  for (const [path, d] of Object.entries(options.procedures ?? {})) {
    byPath.set(path, parseDuration(`procedures["${path}"]`, d));
  }
  return { fallback, byPath };
}

/** The error of a call to `op` whose deadline of `ms` passed. @internal */
export function deadlineRefusal(op: Operation, ms: number): TRPCClientError<AnyRouter> {
  const cause = new DeadlineExceededError(ms, {
    message: `Deadline of ${ms} ms exceeded calling "${op.path}" (timeout)`,
  });
  return refusal(cause);
}

type Envelope = OperationResultEnvelope<unknown, TRPCClientError<AnyRouter>>;

function expireDeadline(call: DeadlineCall): void {
  call.expire();
}

/**
 * One call under a deadline: it is the observer of the call below, the
 * caller's abort listener and the teardown, so a call allocates no closures.
 */
class DeadlineCall implements Observer<Envelope, unknown> {
  private done = false;
  private readonly timer: TimerHandle;
  private subscription: Unsubscribable | undefined = undefined;

  constructor(
    private readonly observer: Observer<Envelope, unknown>,
    private readonly op: Operation,
    private readonly ms: number,
  ) {
    this.timer = startTimerWith(Math.max(0, ms), expireDeadline, this);
    op.signal?.addEventListener('abort', this, { once: true });
  }

  start(source: Observable<Envelope, unknown>): void {
    this.subscription = source.subscribe(this);
  }

  /** The deadline passed first. */
  expire(): void {
    this.end(deadlineRefusal(this.op, this.ms));
  }

  /** The caller's `op.signal` aborted first (an EventListener object: no closure per call). */
  handleEvent(): void {
    this.end(aborted(this.op.signal as AbortSignal));
  }

  next(envelope: Envelope): void {
    if (!this.done) this.observer.next(envelope);
  }

  error(error: unknown): void {
    if (this.done) return;
    this.settle();
    this.observer.error(error);
  }

  complete(): void {
    if (this.done) return;
    this.settle();
    this.observer.complete();
  }

  /** Teardown from above. */
  unsubscribe(): void {
    this.settle();
    this.subscription?.unsubscribe();
  }

  private end(error: unknown): void {
    if (this.done) return;
    this.settle();
    this.subscription?.unsubscribe();
    this.observer.error(error);
  }

  private settle(): void {
    this.done = true;
    stopTimer(this.timer);
    this.op.signal?.removeEventListener('abort', this);
  }
}
