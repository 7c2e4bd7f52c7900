import { retryAfterFailure } from '../attempts/retry-loop.js';
import type { TelemetryTarget } from '../attempts/telemetry.js';
import type { CircuitBreaker } from '../breaker/types.js';
import type { TimerWheel } from '../deadline/timer-wheel.js';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { ErrorPolicyError } from '../errors/error-policy-error.js';
import { OperationAbortedError } from '../errors/operation-aborted-error.js';
import type { HealthRegistry } from '../health/registry.js';
import { abortError } from '../internal/abort.js';
import { notify } from '../internal/notify.js';
import type { AdaptiveLimiter, LimitOutcome } from '../limit/adaptive-limiter.js';
import type { Criticality } from '../limit/criticality.js';
import type { ErrorPolicy, ErrorVerdict } from '../retry/verdict.js';
import type { Clock } from '../time/clock.js';
import { attemptWithTimeout } from './attempt.js';
import type { ProviderLoad } from './load.js';
import type { ProviderProtection } from './protection.js';
import type { RouteOperation } from './types.js';

/** A registered provider with its resolved protection and live counters. @internal */
export interface ProviderRuntime<R> {
  readonly index: number;
  readonly id: string;
  readonly resource: R;
  readonly config: ProviderProtection;
  readonly breaker: CircuitBreaker | undefined;
  /**
   * The provider's adaptive concurrency limit (`concurrency.adaptive`), or `undefined` for none.
   * Twin routers over the same providers share one (see `shareLimiters`).
   */
  limiter: AdaptiveLimiter | undefined;
  /** Visits in flight and their latency (the load selections read). */
  readonly load: ProviderLoad;
  /** The one recovery probe allowed while the health registry reports this provider half-open is out. */
  healthProbing: boolean;
  /**
   * The transport says it cannot reach the provider (grpc-js `TRANSIENT_FAILURE`), until it
   * connects again: the provider is visited after every other one (see `RouterCore.arrange`).
   */
  unreachable: boolean;
  /** The provider's health service said `NOT_SERVING`, until it says `SERVING`: visited last too. */
  notServing: boolean;
  /**
   * Visits in a row that ran past the provider's derived attempt time and lost to another
   * provider's answer (see {@link BLACK_HOLE_LOSSES}); any answer from the provider (a value or
   * an error it sent) resets it.
   */
  slowLossesInARow: number;
  /** Clock time of the provider's latest answer (a value or an error it sent); -Infinity for none. */
  answeredAt: number;
}

/**
 * Visits in a row that ran past their provider's derived attempt time while another provider
 * answered the request: this many eject the provider (its circuit opens). A black hole (it
 * accepts and never answers) is found within about two cuts, where the circuit's own count
 * and span would take seconds; a healthy provider answers between two of its slow calls.
 */
export const BLACK_HOLE_LOSSES = 2;

/**
 * Whether a provider other than `p` may take a failover or backup now: its circuit is not
 * open and its transport and health do not say it cannot answer.
 * @internal
 */
export function anotherMayAnswer(p: ProviderRuntime<unknown>, env: VisitEnv): boolean {
  return env.config.providers.some(
    (q) =>
      q !== p &&
      q.breaker?.state !== 'open' &&
      !q.unreachable &&
      !q.notServing &&
      !env.health.isOpen(q.id),
  );
}

/** The abort reasons of visits that lost to another provider's answer (hedge and race losers). */
const lostReasons = new WeakSet<object>();

/** Reason given to a visit that lost to another provider's answer. @internal */
export function lostToAnother(): OperationAbortedError {
  const reason = new OperationAbortedError({ message: 'Another provider answered first' });
  lostReasons.add(reason);
  return reason;
}

/**
 * What a visit's end tells its provider's adaptive limit: a success or an
 * application error is an answer (its latency is a sample); a timeout is a
 * drop; a cancelled visit, a throwing policy and a failure that never reached
 * the provider tell nothing.
 * @internal
 */
export function visitLimitOutcome(error: unknown, signal: AbortSignal): LimitOutcome {
  if (signal.aborted || !(error instanceof VisitFailure) || error.verdict.neverSent === true) {
    return 'ignored';
  }
  if (error.verdict.timedOut === true || isDeadlineExceededError(error.error)) return 'dropped';
  return 'answered';
}

/**
 * A loser that ran past its provider's normal latency was slow, not merely
 * second: its circuit counts it as a failure. Not retried or failed over: the
 * request already has its answer.
 */
const SLOW_LOSER: ErrorVerdict = Object.freeze({
  retry: false,
  failover: false,
  countForCircuit: true,
  timedOut: true,
});

/** Router-wide dependencies of a visit. @internal */
export interface VisitEnv {
  readonly clock: Clock;
  /** Where attempt deadlines wait (the shared host wheel, or one on the injected sleep). */
  readonly wheel: TimerWheel;
  readonly health: HealthRegistry;
  /** The router's providers: a failover may follow a timed-out attempt while another may answer. */
  readonly config: { readonly providers: readonly ProviderRuntime<unknown>[] };
}

/**
 * A provider's visit ended in an operation failure (after its own retries).
 * Internal wrapper: the router unwraps `error` before anything reaches users.
 * @internal
 */
export class VisitFailure {
  constructor(
    readonly error: unknown,
    /** The verdict on the visit's last failure (the engine decides failover from it). */
    readonly verdict: ErrorVerdict,
    /** The failure counted toward the circuit and health. */
    readonly counted: boolean,
    readonly durationMs: number,
  ) {}
}

const ALLOW: ErrorVerdict = {};

/** `ErrorPolicyError`s raised by the router's own policy calls (an operation may throw one too). */
const policyErrors = new WeakSet<object>();

/** True for an `ErrorPolicyError` the router raised because its policy threw. @internal */
export function isPolicyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && policyErrors.has(error);
}

/**
 * Runs the error policy on a failed attempt. A throwing policy becomes an
 * `ErrorPolicyError` (marked, so the router skips fallback for it).
 * @internal
 */
export function judge(error: unknown, policy: ErrorPolicy | undefined): ErrorVerdict {
  if (policy === undefined) return ALLOW;
  try {
    return policy(error);
  } catch (policyError) {
    const wrapped = new ErrorPolicyError(error, policyError);
    policyErrors.add(wrapped);
    throw wrapped;
  }
}

/**
 * Reports a successful visit, whose attempt started at `startedAt` on `env`'s
 * clock, to the provider's circuit and health.
 * @internal
 */
export function visitSucceeded(
  p: ProviderRuntime<unknown>,
  permit: number,
  startedAt: number,
  env: VisitEnv,
): void {
  const clock = env.clock;
  const end = clock();
  const ms = end - startedAt;
  p.slowLossesInARow = 0;
  p.answeredAt = end;
  if (permit >= 0) p.breaker?.release(permit, { outcome: 'success', durationMs: ms });
  env.health.success(p.id, ms);
  p.config.attemptTimeout.observe(p.id, ms, end);
  p.load.succeeded(ms, end);
}

/** Reports a visit's final failure to the provider's circuit and health; returns its record. @internal */
export function visitFailed(
  p: ProviderRuntime<unknown>,
  permit: number,
  error: unknown,
  verdict: ErrorVerdict,
  durationMs: number,
  env: VisitEnv,
): VisitFailure {
  // A visit that never reached the provider (the verdict's neverSent) counts, probe or not: the
  // provider is unreachable, and the router has others to send the next calls to.
  const counted = verdict.countForCircuit !== false;
  // An error that came back from the provider is an answer: whatever it is, it is no black hole.
  if (verdict.timedOut !== true && verdict.neverSent !== true && !isDeadlineExceededError(error)) {
    p.slowLossesInARow = 0;
    p.answeredAt = env.clock();
  }
  if (permit >= 0)
    p.breaker?.release(permit, { outcome: counted ? 'failure' : 'neutral', durationMs });
  if (counted) env.health.failure(p.id);
  p.load.failed(durationMs, env.clock());
  return new VisitFailure(error, verdict, counted, durationMs);
}

/**
 * The end of a one-attempt visit the router ran inline (its fast path), by the
 * same rules as {@link runVisit}: returns what to throw — the abort error
 * (neutral), an `ErrorPolicyError` (neutral) or a {@link VisitFailure}.
 * @internal
 */
export function singleAttemptFailed(
  p: ProviderRuntime<unknown>,
  permit: number,
  error: unknown,
  signal: AbortSignal,
  policy: ErrorPolicy | undefined,
  durationMs: number,
  env: VisitEnv,
): unknown {
  let verdict: ErrorVerdict;
  try {
    if (signal.aborted) throw abortError(signal);
    verdict = judge(error, policy);
  } catch (neutral) {
    if (permit >= 0) p.breaker?.release(permit, { outcome: 'neutral' });
    return neutral;
  }
  return visitFailed(p, permit, error, verdict, durationMs, env);
}

/**
 * Starts attempt `attempt` on `p`: directly, or under the per-attempt timeout
 * (`attemptTimeoutMs`, explicit or standard), shortened to what is left before
 * the visit's deadline `deadlineAt`. The derived rule (`attemptTimeoutMs` left
 * out) never cuts a visit's attempt: a visit that runs past it gets a backup
 * on another provider instead (`routeParallel`), and keeps running. The
 * request's deadline alone arms no timer: the operation enforces it.
 * @internal
 */
export function startAttempt<R, T>(
  p: ProviderRuntime<R>,
  fn: RouteOperation<R, T>,
  signal: AbortSignal,
  attempt: number,
  env: VisitEnv,
  deadlineAt: number,
): T | PromiseLike<T> {
  const { config } = p;
  let timeoutMs = config.attemptTimeoutMs;
  if (deadlineAt !== Number.POSITIVE_INFINITY) {
    // The engine never starts a retry at or past the deadline, so what is left is > 0 (1 ms at least).
    timeoutMs = Math.min(timeoutMs, Math.max(deadlineAt - env.clock(), 1));
  }
  if (timeoutMs === Number.POSITIVE_INFINITY) {
    return fn(p.resource, { signal, providerId: p.id, attempt });
  }
  return attemptWithTimeout(
    fn,
    p.resource,
    signal,
    p.id,
    attempt,
    timeoutMs,
    config.waitOnTimeout,
    env.wheel,
  );
}

/** The visit's absolute deadline on `env`'s clock, from `startedAt`; `Infinity` for none. @internal */
export function visitDeadline(p: ProviderRuntime<unknown>, startedAt: number): number {
  const t = p.config.timeoutMs;
  return t === Number.POSITIVE_INFINITY ? t : startedAt + t;
}

/** What bounds one request across its visits. @internal */
export interface RequestBounds {
  /** The request's own deadline on the router's clock (`Infinity` for none): it bounds the retries. */
  readonly deadlineAt: number;
  /** The request is safe to repeat; else no backup ever starts beside a slow visit (see `routeParallel`). */
  readonly idempotent: boolean;
  /** How much the request matters under an adaptive limit: each provider refuses the lowest tier first. */
  readonly criticality: Criticality;
  /** Who telemetry and events say made the request: the router, and the method when the caller named it. */
  readonly target: TelemetryTarget;
}

/** A first attempt the router already ran inline, and how it failed. @internal */
export interface FailedFirstAttempt {
  readonly error: unknown;
  /** Clock time the visit (its first attempt) started. */
  readonly startedAt: number;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/**
 * Visits one provider: its attempts on the provider's engine (retries,
 * backoff or pushback, visit deadline, budget), each under the per-attempt
 * timeout, judged by `policy`; then reports the visit's outcome once to the
 * provider's circuit (the `permit` from `tryAcquire`, or -1 without a circuit)
 * and its health. Resolves with the operation's value. Rejects with a
 * {@link VisitFailure} for an operation failure, with the abort error when
 * `signal` aborted (neutral: never counted, never retried), or with an
 * `ErrorPolicyError` when the policy threw (neutral). With `first`, attempt 1
 * already ran (inline, on the router's hot path) and failed: the visit goes
 * on from judging that failure. `request.deadlineAt` is the request's own
 * deadline (`Infinity` for none): it bounds the retries, not the attempts. A
 * `probe` visit (a half-open circuit's or the health registry's recovery
 * probe) makes one attempt, never retried.
 * @internal
 */
export async function runVisit<R, T>(
  p: ProviderRuntime<R>,
  permit: number,
  probe: boolean,
  fn: RouteOperation<R, T>,
  signal: AbortSignal,
  policy: ErrorPolicy | undefined,
  env: VisitEnv,
  request: RequestBounds,
  first?: FailedFirstAttempt,
): Promise<T> {
  const visitStart = first === undefined ? env.clock() : first.startedAt;
  const deadlineAt = visitDeadline(p, visitStart);
  const state: VisitState = {
    verdict: ALLOW,
    attemptStart: visitStart,
    retryBy: Math.min(deadlineAt, request.deadlineAt),
  };
  p.load.begin(visitStart);
  try {
    let value: T;
    try {
      if (first === undefined) {
        if (signal.aborted) throw abortError(signal);
        try {
          value = await startAttempt(p, fn, signal, 1, env, deadlineAt);
        } catch (error) {
          value = await continueVisit(p, probe, fn, signal, policy, env, deadlineAt, error, state);
        }
      } else {
        value = await continueVisit(
          p,
          probe,
          fn,
          signal,
          policy,
          env,
          deadlineAt,
          first.error,
          state,
        );
      }
    } catch (error) {
      // Cancellation (the caller's, or a hedge/race that was already won) and a throwing policy
      // are neutral — except a loser whose attempt ran past the provider's normal latency.
      if (signal.aborted) {
        const now = env.clock();
        const ran = now - state.attemptStart;
        if (
          permit >= 0 &&
          lostReasons.has(signal.reason) &&
          p.config.attemptTimeout.ranPastNormal(p.id, ran, now)
        ) {
          visitFailed(p, permit, signal.reason, SLOW_LOSER, ran, env);
          permit = -1;
          // Only while the provider answered nothing since this visit started: a healthy one that
          // answered others meanwhile is slow on this call, not a black hole.
          p.slowLossesInARow = p.answeredAt > state.attemptStart ? 0 : p.slowLossesInARow + 1;
          if (p.slowLossesInARow >= BLACK_HOLE_LOSSES && p.breaker?.state === 'closed') {
            p.breaker.trip();
          }
        }
        throw abortError(signal);
      }
      if (isPolicyError(error)) throw error;
      const failure = visitFailed(p, permit, error, state.verdict, env.clock() - visitStart, env);
      permit = -1;
      throw failure;
    }
    visitSucceeded(p, permit, state.attemptStart, env);
    permit = -1;
    return value;
  } finally {
    p.load.end(visitStart);
    // Every other way out (abort, throwing policy) is neutral for the circuit.
    if (permit >= 0) p.breaker?.release(permit, { outcome: 'neutral' });
  }
}

/** What a visit's driver learns as it goes: the last verdict, and when the last attempt started. */
interface VisitState {
  verdict: ErrorVerdict;
  attemptStart: number;
  /** The deadline retries must start before: the visit's or the request's, whichever is first. */
  readonly retryBy: number;
}

/**
 * Attempt 1 of a visit failed with `error`: judges it and retries on the
 * provider's engine until an attempt succeeds or the engine stops (then
 * rejects with the last attempt's error). Without an engine (one attempt per
 * visit), judges and rejects.
 */
function continueVisit<R, T>(
  p: ProviderRuntime<R>,
  probe: boolean,
  fn: RouteOperation<R, T>,
  signal: AbortSignal,
  policy: ErrorPolicy | undefined,
  env: VisitEnv,
  deadlineAt: number,
  error: unknown,
  state: VisitState,
): Promise<T> {
  // A recovery probe gets one attempt: its failure re-opens the circuit, and the request fails over.
  const engine = probe ? undefined : p.config.engine;
  if (engine === undefined) {
    if (signal.aborted) return Promise.reject(abortError(signal));
    state.verdict = judge(error, policy);
    return Promise.reject(error);
  }
  const onRetry = p.config.onRetry;
  return retryAfterFailure<T>(
    engine,
    {
      run: (attempt) => {
        state.attemptStart = env.clock();
        return startAttempt(p, fn, signal, attempt, env, deadlineAt);
      },
      judge: (e) => {
        state.verdict = judge(e, policy);
        return state.verdict;
      },
      retrying:
        onRetry === undefined
          ? undefined
          : (attempt, delayMs, e) => notify(onRetry, { attempt, delayMs, errorName: errorName(e) }),
    },
    1,
    error,
    signal,
    state.retryBy,
  );
}
