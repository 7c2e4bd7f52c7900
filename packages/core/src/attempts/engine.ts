import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { type Backoff, type BackoffOptions, createBackoff } from '../retry/backoff.js';
import type { ErrorVerdict } from '../retry/verdict.js';
import { type Clock, systemClock } from '../time/clock.js';
import { type Sleep, systemSleep } from '../time/sleep.js';

/**
 * The one attempt engine of Breakwater. Every decision to retry, hedge or fail
 * over — attempt counting, backoff, server pushback, the deadline check and
 * retry-budget accounting — is made here, by the rules below, for `withRetry`,
 * `protect`, the router and every adapter. A driver (a promise loop, a
 * callback state machine, a gRPC interceptor) runs the attempts and asks the
 * engine what to do after each one; the engine answers with a number so the
 * answer allocates nothing:
 *
 * - `>= 0`: retry (or fail over) after that many ms;
 * - `< 0`: stop, for the reason named by the `STOP_*` constant.
 *
 * The rules, in the order they are applied after a failed attempt:
 * 1. a verdict with `retry: false` stops ({@link STOP_NOT_RETRYABLE});
 * 2. the attempt that failed was the last allowed one ({@link STOP_ATTEMPTS});
 * 3. server pushback (`retryAfterMs` on the verdict, else on the error) that is
 *    negative or not a number stops ({@link STOP_PUSHBACK}), as does one longer
 *    than `maxPushbackMs`; a valid pushback *replaces* the backoff (gRFC A6:
 *    the server knows when it can take the call again); without pushback, an
 *    attempt that timed out (the verdict's `timedOut`, or a
 *    `DeadlineExceededError`) is retried at once: it already waited; with
 *    the default backoff (`retryTurnedAwayAtOnce`), so is the call's *first*
 *    retry after a failure the verdict marks `unprocessed` or `neverSent`
 *    (gRPC `UNAVAILABLE`): the server turned it away untouched, and over a
 *    multi-replica channel (grpc-js `round_robin`) the retry lands on another
 *    replica, as grpc-js hedging's at-once retry of a non-fatal status does;
 *    later retries back off, so a target that turns every attempt away is not
 *    hammered (the budget and the circuit bound the rest). A backoff the user
 *    gives means exactly what it says: every retry waits it;
 * 4. a retry whose delay ends at or after the call's deadline is skipped
 *    ({@link STOP_DEADLINE}): it could not finish, so the caller gets the last
 *    attempt's error at once instead of a wait that ends in a deadline error;
 * 5. the retry budget is asked last, so it is charged only for a retry that
 *    will happen ({@link STOP_BUDGET}) — and only when the failed attempt
 *    reached a server: an attempt the verdict marks `neverSent` (no
 *    connection, stream refused) added no load to any server, which is what
 *    the budget protects, so its retry is bounded by `attempts` alone.
 *
 * Hedging (`hedgeDelayMs`) launches another attempt whenever the latest has
 * been outstanding for the delay, within `attempts` and the budget, leaving
 * the budget's hedge reserve to retries and failovers (`tryHedge`); a failed
 * hedged attempt is replaced at once (after pushback, never backoff). A
 * failover to another provider is a retry too: it is charged to the budget,
 * unless the failed visit never reached a server (bounded by the providers
 * left: each is visited at most once per call).
 */
export class AttemptEngine {
  /** Attempts per call, the first included. */
  readonly attempts: number;
  readonly backoff: Backoff;
  readonly budget: RetryBudgetLike | undefined;
  /** Hedging delay in ms, or `undefined` when attempts run one after another. */
  readonly hedgeDelayMs: number | undefined;
  readonly maxPushbackMs: number;
  /** The first retry after a turned-away attempt goes at once (rule 3). */
  readonly retryTurnedAwayAtOnce: boolean;
  readonly clock: Clock;
  readonly sleep: Sleep;
  /** Engines for other attempt counts (see {@link AttemptEngine.withAttempts}). */
  private variants: Map<number, AttemptEngine> | undefined = undefined;

  constructor(settings: AttemptEngineSettings) {
    this.attempts = settings.attempts;
    this.backoff = settings.backoff ?? DEFAULT_BACKOFF;
    this.budget = settings.budget;
    this.hedgeDelayMs = settings.hedgeDelayMs;
    this.maxPushbackMs = settings.maxPushbackMs ?? DEFAULT_MAX_PUSHBACK_MS;
    this.retryTurnedAwayAtOnce = settings.retryTurnedAwayAtOnce ?? settings.backoff === undefined;
    this.clock = settings.clock ?? systemClock;
    this.sleep = settings.sleep ?? systemSleep;
  }

  /**
   * After attempt `attempt` (1 = the first) failed with `error`, judged
   * `verdict`: the delay before the next attempt, or a `STOP_*` code.
   * `previousDelayMs` is the delay used before `attempt` (0 for the first);
   * `deadlineAt` the call's absolute deadline on the engine's clock
   * (`Infinity` for none).
   */
  afterFailure(
    attempt: number,
    previousDelayMs: number,
    verdict: ErrorVerdict | undefined,
    error: unknown,
    deadlineAt: number,
  ): number {
    if (verdict !== undefined && verdict.retry === false) return STOP_NOT_RETRYABLE;
    if (attempt >= this.attempts) return STOP_ATTEMPTS;
    const pushback = pushbackOf(verdict, error);
    let delay: number;
    if (pushback === NO_PUSHBACK) {
      const backOff =
        this.hedgeDelayMs === undefined &&
        !timedOut(verdict, error) &&
        !(attempt === 1 && this.retryTurnedAwayAtOnce && turnedAway(verdict));
      delay = backOff ? this.backoff.delayFor(attempt, previousDelayMs) : 0;
    } else {
      if (!(pushback >= 0) || pushback > this.maxPushbackMs) return STOP_PUSHBACK;
      delay = pushback;
    }
    if (deadlineAt !== Number.POSITIVE_INFINITY && this.clock() + delay >= deadlineAt) {
      return STOP_DEADLINE;
    }
    if (!this.chargeRetry(verdict)) return STOP_BUDGET;
    return delay;
  }

  /**
   * The hedge timer of a call with `started` attempts fired: whether another
   * attempt may start now (within `attempts`, before the deadline, and with a
   * hedge withdrawn from the budget: never its reserve for retries and failovers).
   */
  mayHedge(started: number, deadlineAt: number): boolean {
    if (this.hedgeDelayMs === undefined || started >= this.attempts) return false;
    if (deadlineAt !== Number.POSITIVE_INFINITY && this.clock() >= deadlineAt) return false;
    const budget = this.budget;
    if (budget === undefined) return true;
    return budget.tryHedge === undefined ? budget.tryRetry() : budget.tryHedge();
  }

  /**
   * A provider's visit failed (after its own retries) with `verdict`: whether
   * the router may move on to another provider (0) or a `STOP_*` code. A
   * failover starts at once, so it needs time left before `deadlineAt`
   * (`Infinity` for none); it re-sends the call, so it is charged to the
   * retry budget like a retry — unless the visit never reached a server.
   */
  mayFailOver(verdict: ErrorVerdict | undefined, deadlineAt = Number.POSITIVE_INFINITY): number {
    if (verdict !== undefined && verdict.failover === false) return STOP_NOT_RETRYABLE;
    if (deadlineAt !== Number.POSITIVE_INFINITY && this.clock() >= deadlineAt) {
      return STOP_DEADLINE;
    }
    if (!this.chargeRetry(verdict)) return STOP_BUDGET;
    return 0;
  }

  /**
   * Withdraws a retry or failover after a failure judged `verdict`: free when
   * the failed attempt never reached a server (the budget protects server load).
   */
  private chargeRetry(verdict: ErrorVerdict | undefined): boolean {
    if (this.budget === undefined || verdict?.neverSent === true) return true;
    return this.budget.tryRetry();
  }

  /**
   * Runs `then` after `ms` on the engine's sleep (on a microtask for 0), unless
   * `cancel` aborts first. A sleep that throws or rejects runs `then` at once:
   * a broken timer must not strand a call (the deadline still bounds it).
   */
  schedule(ms: number, then: () => void, cancel: AbortSignal | undefined): void {
    if (ms <= 0) {
      queueMicrotask(() => {
        if (cancel === undefined || !cancel.aborted) then();
      });
      return;
    }
    let waiting: Promise<void>;
    try {
      waiting = Promise.resolve(this.sleep(ms, cancel));
    } catch {
      waiting = Promise.resolve();
    }
    const go = () => {
      if (cancel === undefined || !cancel.aborted) then();
    };
    waiting.then(go, go);
  }

  /**
   * This engine with `attempts` per call instead (a per-call override, an
   * integer in [1, {@link MAX_ATTEMPTS}] checked by the caller): built once
   * per count and kept, so the calls that ask for it allocate nothing.
   */
  withAttempts(attempts: number): AttemptEngine {
    if (attempts === this.attempts) return this;
    if (this.variants === undefined) this.variants = new Map();
    let variant = this.variants.get(attempts);
    if (variant === undefined) {
      variant = new AttemptEngine({
        attempts,
        backoff: this.backoff,
        budget: this.budget,
        hedgeDelayMs: this.hedgeDelayMs,
        maxPushbackMs: this.maxPushbackMs,
        retryTurnedAwayAtOnce: this.retryTurnedAwayAtOnce,
        clock: this.clock,
        sleep: this.sleep,
      });
      this.variants.set(attempts, variant);
    }
    return variant;
  }
}

/** The part of a retry budget the engine uses (see `createRetryBudget`). */
export interface RetryBudgetLike {
  /** Records one original call (a deposit). */
  recordRequest(): void;
  /** Withdraws one retry or failover; `false` refuses it. */
  tryRetry(): boolean;
  /** Withdraws one hedge, keeping a reserve for retries and failovers; `tryRetry` when absent. */
  tryHedge?(): boolean;
  /** Whether `tryRetry` would grant a retry now, withdrawing nothing. */
  canRetry?(): boolean;
}

/** Validated settings of an {@link AttemptEngine}. @internal */
export interface AttemptEngineSettings {
  /** Attempts per call, the first included; an integer in `[1, MAX_ATTEMPTS]`. */
  attempts: number;
  /** Defaults to {@link DEFAULT_BACKOFF}. */
  backoff?: Backoff | undefined;
  budget?: RetryBudgetLike | undefined;
  hedgeDelayMs?: number | undefined;
  /** Defaults to {@link DEFAULT_MAX_PUSHBACK_MS}. */
  maxPushbackMs?: number | undefined;
  /**
   * The call's first retry after an attempt the server turned away untouched
   * (`unprocessed` or `neverSent`) goes at once instead of after the backoff.
   * Defaults to true when `backoff` is left out (the default policy), false
   * when one is given (a backoff you give means what it says).
   */
  retryTurnedAwayAtOnce?: boolean | undefined;
  clock?: Clock | undefined;
  sleep?: Sleep | undefined;
}

/** Stop: the verdict says the failure is not worth repeating (or not worth failing over). */
export const STOP_NOT_RETRYABLE = -1;
/** Stop: the attempt that failed was the last one allowed. */
export const STOP_ATTEMPTS = -2;
/** Stop: the server's pushback said not to retry (negative, not a number, or longer than allowed). */
export const STOP_PUSHBACK = -3;
/** Stop: the retry could not start before the call's deadline. */
export const STOP_DEADLINE = -4;
/** Stop: the retry budget refused the retry. */
export const STOP_BUDGET = -5;

/** Why an engine stopped, by `STOP_*` code. */
export type StopReason = 'not-retryable' | 'attempts' | 'pushback' | 'deadline' | 'budget';

/** The name of a `STOP_*` code. */
export function stopReason(code: number): StopReason {
  switch (code) {
    case STOP_NOT_RETRYABLE:
      return 'not-retryable';
    case STOP_ATTEMPTS:
      return 'attempts';
    case STOP_PUSHBACK:
      return 'pushback';
    case STOP_DEADLINE:
      return 'deadline';
    default:
      return 'budget';
  }
}

/**
 * The most attempts a call may make, the first included. More than this turns
 * an outage into a retry storm; a retry budget, not a long chain, is what
 * should bound extra load.
 */
export const MAX_ATTEMPTS = 10;

/** Attempts per call when the options name none: the first and two retries. */
export const DEFAULT_ATTEMPTS = 3;

/**
 * The options of the one default backoff: exponential from 100 ms, doubling, capped at 5 s,
 * with full jitter (each delay drawn from `[0, schedule)`), as gRFC A6 does.
 */
export const DEFAULT_BACKOFF_OPTIONS: Readonly<BackoffOptions> = Object.freeze({
  baseDelayMs: 100,
  strategy: 'exponential',
  maxDelayMs: 5_000,
  jitter: 'full',
});

/**
 * `DEFAULT_BACKOFF_OPTIONS` built: the backoff of every stack that names none.
 * Marked pure so that a bundle which never reads it (one importing only
 * `DEFAULT_ATTEMPTS`) leaves out the backoff and option-checking code it builds with.
 */
export const DEFAULT_BACKOFF: Backoff = /* @__PURE__ */ createBackoff(DEFAULT_BACKOFF_OPTIONS);

/** The longest server pushback honoured; a longer one ends the retries at once. */
export const DEFAULT_MAX_PUSHBACK_MS = 30_000;

const NO_PUSHBACK = Number.POSITIVE_INFINITY;

/**
 * The attempt ran out its own deadline: the verdict says so (an adapter whose
 * framework reports it, e.g. gRPC `DEADLINE_EXCEEDED` under a per-attempt
 * deadline), or the error is core's `DeadlineExceededError`.
 */
function timedOut(verdict: ErrorVerdict | undefined, error: unknown): boolean {
  return verdict?.timedOut === true || isDeadlineExceededError(error);
}

/** The server turned the attempt away untouched, or it never reached one. */
function turnedAway(verdict: ErrorVerdict | undefined): boolean {
  return verdict?.unprocessed === true || verdict?.neverSent === true;
}

/**
 * Server pushback for one failure: the verdict's `retryAfterMs` when it has
 * one (any number, so a negative or NaN value can say "do not retry"), else a
 * finite, non-negative `retryAfterMs` carried by the error itself (e.g. a
 * `RateLimitError`); `Infinity` when there is none.
 */
function pushbackOf(verdict: ErrorVerdict | undefined, error: unknown): number {
  const fromVerdict = verdict?.retryAfterMs;
  if (fromVerdict !== undefined) {
    // Infinity is "never": a pushback too long to honour, not the absence of one.
    return typeof fromVerdict === 'number' && fromVerdict !== NO_PUSHBACK
      ? fromVerdict
      : Number.NaN;
  }
  if (typeof error !== 'object' || error === null) return NO_PUSHBACK;
  const fromError = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof fromError === 'number' && fromError >= 0 && Number.isFinite(fromError)
    ? fromError
    : NO_PUSHBACK;
}
