import {
  type Backoff,
  type BackoffOptions,
  checkNumber,
  checkOptions,
  createBackoff,
  type ErrorVerdict,
  type KnownKeys,
  optionPath,
  optionRangeError,
  type RetryBudget,
  type Sleep,
  systemSleep,
} from '@breakwater/core';
import type { Operation, OperationResultEnvelope, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import {
  type Observable,
  type Observer,
  observable,
  type Unsubscribable,
} from '@trpc/server/observable';
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

/** Keys of {@link RetryLinkOptions}. @internal */
export const RETRY_LINK_KEYS = {
  attempts: true,
  backoff: true,
  budget: true,
  classify: true,
  retryMutations: true,
  maxRetryAfterMs: true,
  resumeSubscriptions: true,
  onRetry: true,
  sleep: true,
} as const satisfies KnownKeys<RetryLinkOptions>;

const DEFAULT_BACKOFF: BackoffOptions = {
  baseDelayMs: 100,
  strategy: 'exponential',
  maxDelayMs: 5000,
};

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw optionRangeError(name, `must be an integer >= 1, got ${String(value)}`, 'retryLink');
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
  return retryLinkFrom(resolveRetry(options));
}

/** {@link retryLink}'s options, validated and defaulted once. @internal */
export interface RetrySettings {
  attempts: number;
  backoff: Backoff;
  budget: RetryBudget | undefined;
  classify: (error: unknown, op: Operation) => ErrorVerdict;
  retryMutations: boolean;
  maxRetryAfterMs: number;
  resume: boolean;
  onRetry: ((event: TRPCRetryEvent) => void) | undefined;
  sleep: Sleep;
}

/** Validates and defaults {@link RetryLinkOptions}. @internal */
export function resolveRetry(options: RetryLinkOptions): RetrySettings {
  checkOptions('retryLink', options, RETRY_LINK_KEYS, '', false);
  const given = options.backoff;
  const backoff =
    given && typeof (given as Backoff).delayFor === 'function'
      ? (given as Backoff)
      : optionPath(
          'backoff',
          () => createBackoff((given as BackoffOptions | undefined) ?? DEFAULT_BACKOFF),
          'retryLink',
        );
  return {
    attempts: positiveInteger('attempts', options.attempts ?? backoff.budgetedAttempts ?? 3),
    backoff,
    budget: options.budget,
    classify: options.classify ?? classifyTRPCError,
    retryMutations: options.retryMutations ?? false,
    maxRetryAfterMs:
      options.maxRetryAfterMs === undefined
        ? 30_000
        : optionPath(
            '',
            () =>
              checkNumber('maxRetryAfterMs', options.maxRetryAfterMs, {
                min: 0,
                allowInfinity: true,
              }),
            'retryLink',
          ),
    resume: options.resumeSubscriptions ?? true,
    onRetry: options.onRetry,
    sleep: options.sleep ?? systemSleep,
  };
}

/** {@link retryLink} over settings already resolved (shared with `resilienceLink`'s fused path). @internal */
export function retryLinkFrom<TRouter extends AnyRouter>(
  settings: RetrySettings,
): TRPCLink<TRouter> {
  const { attempts, budget, resume, retryMutations } = settings;
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
        const call = new RetryCall(observer as Observer<Envelope, unknown>, op, next, settings);
        call.start();
        return call;
      });
    };
  };
}

/**
 * The wait before retrying after attempt number `attempt` failed with
 * `error`, or `undefined` when the call should end with it: not retryable,
 * out of attempts, aborted, a `Retry-After` beyond `maxRetryAfterMs`, or
 * refused by the budget (asked last, so a refusal is only counted for a
 * retry that would otherwise happen). `transport` retries regardless of the
 * verdict's `retry` (a dropped subscription stream).
 * @internal
 */
export function retryDelay(
  settings: RetrySettings,
  op: Operation,
  error: unknown,
  attempt: number,
  previousDelay: number | undefined,
  transport = false,
): number | undefined {
  const verdict = settings.classify(error, op);
  if (verdict.retry === false && !(transport && verdict.countForCircuit !== false))
    return undefined;
  if (attempt >= settings.attempts || op.signal?.aborted) return undefined;
  let delay = settings.backoff.delayFor(attempt, previousDelay);
  if (verdict.retryAfterMs !== undefined) {
    if (verdict.retryAfterMs > settings.maxRetryAfterMs) return undefined;
    delay = Math.max(delay, verdict.retryAfterMs);
  }
  if (settings.budget && !settings.budget.tryRetry()) return undefined;
  return delay;
}

type Envelope = OperationResultEnvelope<unknown, TRPCClientError<AnyRouter>>;
type Next = (op: Operation) => Observable<Envelope, TRPCClientError<AnyRouter>>;

/**
 * One retried call: the observer of each attempt and the call's teardown, so
 * an attempt that succeeds allocates no closures (a backoff sleep does).
 */
class RetryCall implements Observer<Envelope, unknown> {
  private attempt = 1;
  private previousDelay: number | undefined = undefined;
  private done = false;
  private current: Unsubscribable | undefined = undefined;
  private sleeper: AbortController | undefined = undefined;
  private lastEventId: string | undefined = undefined;
  private readonly isSubscription: boolean;

  constructor(
    private readonly observer: Observer<Envelope, unknown>,
    private readonly op: Operation,
    private readonly nextLink: Next,
    private readonly settings: RetrySettings,
  ) {
    this.isSubscription = op.type === 'subscription';
  }

  start(): void {
    const { op, lastEventId } = this;
    const attemptOp: Operation =
      lastEventId === undefined ? op : { ...op, input: inputAfterEvent(op.input, lastEventId) };
    const subscription = this.nextLink(attemptOp).subscribe(this);
    // An attempt that failed synchronously has already been handled.
    if (this.done) subscription.unsubscribe();
    else if (this.sleeper === undefined) this.current = subscription;
  }

  next(envelope: Envelope): void {
    const result = envelope.result as { type?: string; id?: string };
    if (this.isSubscription && (!result.type || result.type === 'data') && result.id) {
      this.lastEventId = result.id;
      // A resumed stream that delivers again has recovered: its retries start over.
      this.attempt = 1;
    }
    this.observer.next(envelope);
  }

  error(cause: unknown): void {
    if (this.done) return;
    const error = cause as TRPCClientError<AnyRouter>;
    this.current = undefined;
    const delay = this.retryDelay(error);
    if (delay === undefined) {
      this.fail(error);
      return;
    }
    const { op, attempt } = this;
    this.settings.onRetry?.({ path: op.path, type: op.type, attempt, delayMs: delay, error });
    this.attempt++;
    this.previousDelay = delay;
    this.wait(delay, error);
  }

  complete(): void {
    this.done = true;
    this.observer.complete();
  }

  unsubscribe(): void {
    this.done = true;
    this.current?.unsubscribe();
    this.sleeper?.abort();
  }

  private fail(error: unknown): void {
    this.done = true;
    this.observer.error(error);
  }

  private retryDelay(error: TRPCClientError<AnyRouter>): number | undefined {
    // A stream that died without a server error is a transport failure: resume it.
    const transport = this.isSubscription && error.shape == null;
    return retryDelay(this.settings, this.op, error, this.attempt, this.previousDelay, transport);
  }

  private wait(delay: number, error: TRPCClientError<AnyRouter>): void {
    const ac = new AbortController();
    this.sleeper = ac;
    const signal = this.op.signal;
    const onAbort = () => ac.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const resumeAfterSleep = () => {
      signal?.removeEventListener('abort', onAbort);
      this.sleeper = undefined;
      if (this.done) return;
      if (signal?.aborted) this.fail(aborted(signal));
      else this.start();
    };
    this.settings.sleep(delay, ac.signal).then(resumeAfterSleep, () => {
      signal?.removeEventListener('abort', onAbort);
      if (!this.done) this.fail(error);
    });
  }
}
