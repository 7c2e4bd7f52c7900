import type { CircuitBreaker } from '../breaker/types.js';
import type { TimerWheel } from '../deadline/timer-wheel.js';
import { ErrorPolicyError } from '../errors/error-policy-error.js';
import type { HealthRegistry } from '../health/registry.js';
import { abortError } from '../internal/abort.js';
import { backoffDelay } from '../protect/backoff.js';
import type { ProtectConfig } from '../protect/options.js';
import type { ProtectRetryBudget } from '../protect/types.js';
import type { ErrorPolicy, ErrorVerdict } from '../retry/verdict.js';
import type { Clock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import type { Sleep } from '../time/sleep.js';
import { attemptWithTimeout } from './attempt.js';
import type { RouteOperation } from './types.js';

/** A registered provider with its resolved protection and live counters. @internal */
export interface ProviderRuntime<R> {
  readonly index: number;
  readonly id: string;
  readonly resource: R;
  readonly config: ProtectConfig;
  readonly breaker: CircuitBreaker | undefined;
  /** Visits in flight (power-of-two load). */
  inflight: number;
  /** The one recovery probe allowed while the health registry reports this provider half-open is out. */
  healthProbing: boolean;
}

/** Router-wide dependencies of a visit. @internal */
export interface VisitEnv {
  readonly clock: Clock;
  readonly sleep: Sleep;
  /** Where attempt deadlines wait (the shared host wheel, or one on the injected sleep). */
  readonly wheel: TimerWheel;
  readonly random: RandomSource;
  readonly budget: ProtectRetryBudget | undefined;
  readonly health: HealthRegistry;
}

/**
 * A provider's visit ended in an operation failure (after its own retries).
 * Internal wrapper: the router unwraps `error` before anything reaches users.
 * @internal
 */
export class VisitFailure {
  constructor(
    readonly error: unknown,
    /** The policy allowed moving on to another provider. */
    readonly failover: boolean,
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

/** Reports a successful visit to the provider's circuit and health. @internal */
export function visitSucceeded(
  p: ProviderRuntime<unknown>,
  permit: number,
  ms: number,
  env: VisitEnv,
): void {
  if (permit >= 0) p.breaker?.release(permit, 'success', ms);
  env.health.success(p.id, ms);
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
  const counted = verdict.countForCircuit !== false;
  if (permit >= 0) p.breaker?.release(permit, counted ? 'failure' : 'neutral');
  if (counted) env.health.failure(p.id);
  return new VisitFailure(error, verdict.failover !== false, counted, durationMs);
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
    if (permit >= 0) p.breaker?.release(permit, 'neutral');
    return neutral;
  }
  return visitFailed(p, permit, error, verdict, durationMs, env);
}

/** Starts attempt `attempt` on `p`: directly, or under the provider's per-attempt timeout. @internal */
export function startAttempt<R, T>(
  p: ProviderRuntime<R>,
  fn: RouteOperation<R, T>,
  signal: AbortSignal,
  attempt: number,
  env: VisitEnv,
): T | PromiseLike<T> {
  const { config } = p;
  if (config.timeoutMs < 0) return fn(p.resource, { signal, providerId: p.id, attempt });
  return attemptWithTimeout(
    fn,
    p.resource,
    signal,
    p.id,
    attempt,
    config.timeoutMs,
    config.waitOnTimeout,
    env.wheel,
  );
}

/** A first attempt the router already ran inline, and how it failed. @internal */
export interface FailedFirstAttempt {
  readonly error: unknown;
  /** Clock time the visit (its first attempt) started. */
  readonly startedAt: number;
}

/**
 * Visits one provider: `protect()`-style attempts with backoff, per-attempt
 * timeout and error policy, then reports the visit's outcome once to the
 * provider's circuit (the `permit` from `tryAcquire`, or -1 without a circuit)
 * and its health. Resolves with the operation's value. Rejects with a
 * {@link VisitFailure} for an operation failure, with the abort error when
 * `signal` aborted (neutral: never counted, never retried), or with an
 * `ErrorPolicyError` when the policy threw (neutral). With `first`, attempt 1
 * already ran (inline, on the router's hot path) and failed: the visit goes
 * on from judging that failure.
 * @internal
 */
export async function runVisit<R, T>(
  p: ProviderRuntime<R>,
  permit: number,
  fn: RouteOperation<R, T>,
  signal: AbortSignal,
  policy: ErrorPolicy | undefined,
  env: VisitEnv,
  first?: FailedFirstAttempt,
): Promise<T> {
  const { config } = p;
  const visitStart = first === undefined ? env.clock() : first.startedAt;
  p.inflight++;
  try {
    for (let attempt = 1; ; attempt++) {
      let error: unknown;
      if (attempt === 1 && first !== undefined) {
        error = first.error;
      } else {
        if (signal.aborted) throw abortError(signal);
        const start = attempt === 1 ? visitStart : env.clock();
        try {
          const value = await startAttempt(p, fn, signal, attempt, env);
          visitSucceeded(p, permit, env.clock() - start, env);
          permit = -1;
          return value;
        } catch (e) {
          error = e;
        }
      }
      // Cancellation (the caller's, or a hedge/race that was already won) is never judged.
      if (signal.aborted) throw abortError(signal);
      const verdict = judge(error, policy);
      if (
        attempt < config.attempts &&
        verdict.retry !== false &&
        (env.budget === undefined || env.budget.tryRetry())
      ) {
        const backoff = config.backoff ? backoffDelay(config.backoff, attempt, env.random) : 0;
        const delay = Math.max(backoff, verdict.retryAfterMs ?? 0);
        if (delay > 0) await env.sleep(delay, signal);
        continue;
      }
      const failure = visitFailed(p, permit, error, verdict, env.clock() - visitStart, env);
      permit = -1;
      throw failure;
    }
  } finally {
    p.inflight--;
    // Every other way out (abort, throwing policy) is neutral for the circuit.
    if (permit >= 0) p.breaker?.release(permit, 'neutral');
  }
}
