import { type AttemptEngine, STOP_BUDGET, STOP_DEADLINE } from '../attempts/engine.js';
import {
  errorTypeOf,
  type SafeCallTelemetry,
  type SafeTelemetry,
  type TelemetryCallOutcome,
} from '../attempts/telemetry.js';
import { isProbePermit } from '../breaker/machine.js';
import type { CallOutcome, CircuitBreaker } from '../breaker/types.js';
import { type TimerWheel, WheelEntry } from '../deadline/timer-wheel.js';
import { CircuitOpenError } from '../errors/circuit-open-error.js';
import {
  DeadlineExceededError,
  isDeadlineExceededError,
} from '../errors/deadline-exceeded-error.js';
import { ErrorPolicyError } from '../errors/error-policy-error.js';
import { QueueFullError } from '../errors/queue-full-error.js';
import { abortError, neverAbortedSignal } from '../internal/abort.js';
import type { EventEmitter } from '../internal/events.js';
import { notify } from '../internal/notify.js';
import { onAbort } from '../internal/on-abort.js';
import { forwardOutcome, type OutcomeSink } from '../internal/settle.js';
import { isThenable } from '../internal/thenable.js';
import type { LimitOutcome, LimitPermit } from '../limit/adaptive-limiter.js';
import { type AdmissionParts, admitCall } from '../limit/admission.js';
import type { Criticality } from '../limit/criticality.js';
import type { SlotPool } from '../pool/pool.js';
import type { Inheritance, LinkedSignal } from '../propagation/inherit.js';
import type { ErrorPolicy, ErrorVerdict } from '../retry/verdict.js';
import type { ProtectConfig } from './options.js';
import type {
  ProtectContext,
  ProtectedFunction,
  ProtectFallback,
  ProtectFallbackEvent,
  ProtectRejectEvent,
  ProtectRejectReason,
  ProtectRetryEvent,
  ProtectTimeoutEvent,
} from './types.js';

/** What every call of one runner shares. @internal */
export interface RunnerShared {
  readonly config: ProtectConfig;
  /** Whether attempts run under a deadline (an attempt timeout or the call's). */
  readonly timed: boolean;
  /** Where attempt deadlines wait: the shared host wheel, or one driven by the injected sleep. */
  readonly wheel: TimerWheel;
  /** The wheel reads the telemetry's clock: one reading serves a call's start and its first deadline. */
  readonly shareClock: boolean;
  readonly breaker: CircuitBreaker | undefined;
  readonly retries: EventEmitter<ProtectRetryEvent>;
  readonly rejects: EventEmitter<ProtectRejectEvent>;
  readonly fallbacks: EventEmitter<ProtectFallbackEvent>;
  readonly timeouts: EventEmitter<ProtectTimeoutEvent>;
  /** Calls started and not yet settled. */
  running: number;
}

/** What one `protect` call is given. @internal */
export interface CallParts<T> {
  readonly shared: RunnerShared;
  readonly fn: ProtectedFunction<T>;
  readonly signal: AbortSignal | undefined;
  readonly fallback: ProtectFallback<T> | undefined;
  readonly policy: ErrorPolicy | undefined;
}

/**
 * Where a call is in its story. It only moves forward, except that a failed
 * attempt may lead back to `attempting` through `backing-off`:
 *
 * admitting → (queued →) attempting ⇄ backing-off (→ retry-due) → settled
 *
 * Any phase may end in `settled` (a refusal, the caller's abort, the deadline).
 */
type Phase =
  /** Created: the deadline, the circuit, the rate limit and the slot are being asked. */
  | { readonly name: 'admitting' }
  /** Waiting in the pool's queue for a slot; `deadline` ends the wait when the call's deadline passes. */
  | { readonly name: 'queued'; readonly deadline: AbortController | undefined }
  /** `attempt`'s callback runs; its outcome decides what comes next. */
  | { readonly name: 'attempting'; readonly attempt: AttemptContext }
  /** An attempt failed and the engine chose to retry: waiting out the backoff. */
  | { readonly name: 'backing-off' }
  /** The backoff is over, but the attempt abandoned at its deadline still runs in the call's slot. */
  | { readonly name: 'retry-due' }
  /** The caller's promise is settled (or its fallback runs); nothing starts any more. */
  | { readonly name: 'settled' };

// The phases that carry nothing: one object each, shared by every call.
const ADMITTING: Phase = Object.freeze({ name: 'admitting' });
const BACKING_OFF: Phase = Object.freeze({ name: 'backing-off' });
const RETRY_DUE: Phase = Object.freeze({ name: 'retry-due' });
const SETTLED: Phase = Object.freeze({ name: 'settled' });

/** A pool slot the call holds until nothing of it runs any more. */
type Slot =
  /** Taken at admission: given back to the pool. */
  | { readonly kind: 'taken'; readonly pool: SlotPool }
  /** Won after a wait in the queue: the pool task that holds it ends. */
  | { readonly kind: 'queued'; readonly end: () => void };

/** The last failed attempt: what the call fails with, and how the policy judged it. */
interface Failure {
  readonly error: unknown;
  /** `undefined` without a policy (everything is retried). */
  readonly verdict: ErrorVerdict | undefined;
}

/** The verdict on a failure when the runner has no policy: everything is retried. */
const RETRYABLE: ErrorVerdict = Object.freeze({});

/** A runner's attempts share one latency: the derived attempt timeout's scope. */
const RUNNER_SCOPE = '';

/**
 * The context handed to one attempt. Its `signal` is created when first read
 * (most callbacks never read it), and is the attempt's own: no other call's
 * deadline can abort it. Without a deadline the caller's signal is passed through.
 */
class AttemptContext implements ProtectContext, OutcomeSink {
  private controller: AbortController | undefined = undefined;
  /** Why this attempt's signal is (or must be, once created) aborted. */
  reason: Error | undefined = undefined;
  /** The attempt's outcome has been taken; a late settlement is absorbed. */
  done = false;

  constructor(
    private readonly call: Call<unknown>,
    readonly attempt: number,
    /** The signal of an untimed attempt (the caller's, or one never aborted); `undefined` when timed. */
    private readonly passed: AbortSignal | undefined,
  ) {}

  get signal(): AbortSignal {
    if (this.passed !== undefined) return this.passed;
    if (this.controller !== undefined) return this.controller.signal;
    const c = new AbortController();
    this.controller = c;
    if (this.reason !== undefined) c.abort(this.reason);
    return c.signal;
  }

  /** The callback's promise settled. */
  onOutcome(ok: boolean, value: unknown): void {
    this.call.attemptSettled(this, ok, value);
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/**
 * One `protect` call, in the order it happens: it is admitted (its deadline,
 * then the circuit, the rate limit and a slot), may wait in the queue, runs
 * attempts — each failure judged by the policy and the engine, which may back
 * off and retry — and settles once, with a value, an error or its fallback's
 * answer. Its slot goes back only when nothing of it runs any more. It is its
 * own timer-wheel entry: the wheel holds at most one deadline of a call at a
 * time (the queue's, or the current attempt's).
 * @internal
 */
export class Call<T> extends WheelEntry {
  private phase: Phase = ADMITTING;
  private readonly shared: RunnerShared;
  private readonly fn: ProtectedFunction<T>;
  private readonly fallback: ProtectFallback<T> | undefined;
  private readonly policy: ErrorPolicy | undefined;
  /** The caller's signal; inside a bound handler, linked to the inbound call's cancellation. */
  private callerSignal: AbortSignal | undefined;
  private resolve: (value: T | PromiseLike<T>) => void = () => {};
  private reject: (error: unknown) => void = () => {};
  /** The number of the latest attempt (0 before the first). */
  private attempt = 0;
  /** The circuit's permit until the call's outcome is reported; `undefined` without a circuit. */
  private permit: number | undefined = undefined;
  private slot: Slot | undefined = undefined;
  /** The call's slot under the adaptive limit (`concurrency.adaptive`). */
  private limit: LimitPermit | undefined = undefined;
  /** What the call's end tells the adaptive limit, once it ended. */
  private limitOutcome: LimitOutcome = 'ignored';
  /**
   * The latest attempt while its callback has not settled, even once its
   * deadline abandoned it: what the call holds goes back, and a retry that
   * needs the pool slot starts, only once it settles — so operations running
   * at the backend never exceed `concurrency`. (A retry never starts while
   * this holds the slot, so an earlier attempt still running holds nothing.)
   */
  private stillRunning: AttemptContext | undefined = undefined;
  /** The call settled while {@link Call.stillRunning} ran: whether its slot goes back as a success once that settles. */
  private slotOwed: boolean | undefined = undefined;
  private lastFailure: Failure | undefined = undefined;
  /** This call's `timeoutMs`: the runner's, or less inside a bound handler (what is left of the inbound deadline). */
  private timeoutMs: number;
  /** Whether this call's attempts run under a deadline (the runner's {@link RunnerShared.timed}, or an inherited one). */
  private timed: boolean;
  /** Wheel time the call's deadline started: entering the queue, else its first attempt. */
  private deadlineStartedAt: number | undefined = undefined;
  /**
   * The call's deadline on the runner's clock, derived from
   * {@link Call.deadlineStartedAt} when first needed (a failure, a retry):
   * a call that succeeds at once never needs it.
   */
  private deadlineAt: number | undefined = undefined;
  /** The configured deadline the current attempt's timer stands for, in ms (what the timeout event says). */
  private timerMs = 0;
  /** Wheel time the current attempt's deadline was armed. */
  private attemptStartedAt = 0;
  /** The wait before the current attempt (0 for the first). */
  private previousDelayMs = 0;
  /** What the call inherits from the inbound call it runs under; `undefined` outside a bound handler. */
  private inherited: Inheritance | undefined = undefined;
  /** The caller's signal linked to the inbound call's cancellation, released when the call settles. */
  private linked: LinkedSignal | undefined = undefined;
  /** Stops waiting on the caller's signal, once the call has started. */
  private stopListening: (() => void) | undefined = undefined;
  /** What hears this call's telemetry; `undefined` without the option. */
  private readonly tel: SafeCallTelemetry | undefined;
  /**
   * A telemetry clock reading the next event takes instead of reading the
   * clock again: the call's start (taken by attempt 1 or a refusal), then the
   * end of an attempt that may end the call (taken by {@link Call.finish}).
   */
  private telAt: number | undefined = undefined;

  constructor(parts: CallParts<T>) {
    super();
    const shared = parts.shared;
    this.shared = shared;
    this.fn = parts.fn;
    this.callerSignal = parts.signal;
    this.fallback = parts.fallback;
    this.policy = parts.policy;
    this.timeoutMs = shared.config.timeoutMs;
    this.timed = shared.timed;
    const config = shared.config;
    const telemetry = config.telemetry;
    if (telemetry === undefined) this.tel = undefined;
    else {
      const now = telemetry.clock();
      this.telAt = now;
      this.tel = telemetry.startCall(config.target, now);
    }
  }

  private get settled(): boolean {
    return this.phase.name === 'settled';
  }

  /** The call holds a half-open probe's permit: it is never retried, and its attempt never cut for a retry. */
  private get isProbe(): boolean {
    return this.permit !== undefined && isProbePermit(this.permit);
  }

  /**
   * Runs the call under the inbound call it serves: it aborts with the inbound
   * call, and its deadline (set when it leaves the queue) is at most the
   * inbound one less the margin.
   */
  inherit(inherited: Inheritance): this {
    this.inherited = inherited;
    this.linked = inherited.link(this.callerSignal);
    this.callerSignal = this.linked.signal;
    return this;
  }

  // ---- Admission ----------------------------------------------------------

  /**
   * Admits the call and runs it: its deadline starts first (an inherited one
   * included), then the circuit, the rate limit and the slot, in that order
   * (see `admitCall`). A call that waits for a slot waits within its deadline.
   */
  admit(parts: AdmissionParts, criticality: Criticality): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (this.inherited !== undefined && !this.inheritDeadline(this.inherited)) return promise;
    const admission = admitCall(parts, criticality);
    if (!admission.admitted) {
      this.refuseNow(admission.reason, admission.error);
      return promise;
    }
    // Admission says `-1` when there is no circuit.
    if (admission.permit >= 0) this.permit = admission.permit;
    this.limit = admission.limit;
    if (admission.slot === 'queue') {
      this.queue(parts.pool as SlotPool);
      return promise;
    }
    if (admission.slot === 'taken') this.slot = { kind: 'taken', pool: parts.pool as SlotPool };
    this.begin();
    return promise;
  }

  /** Takes the inherited deadline when it is earlier; false (the call failed) when it has passed. */
  private inheritDeadline(inherited: Inheritance): boolean {
    const left = inherited.remainingMs();
    if (left <= 0) {
      this.phase = SETTLED;
      this.linked?.release();
      this.tel?.refused('deadline-expired');
      this.tel?.end('refused', 0, undefined, this.takeTelAt());
      // As the router's refusal of an expired request: the fallback may answer it.
      this.failWith(new DeadlineExceededError(0), 'error');
      return false;
    }
    if (left < this.timeoutMs) {
      this.timeoutMs = left;
      this.timed = true;
    }
    return true;
  }

  /** Refuses the call before it holds anything: fallback at once when there is one. */
  private refuseNow(reason: ProtectRejectReason, cause?: Error): void {
    const shared = this.shared;
    this.phase = SETTLED;
    this.linked?.release();
    if (shared.rejects.active) shared.rejects.emit({ reason });
    const tel = this.tel;
    if (tel !== undefined) {
      tel.refused(reason);
      tel.end('refused', 0, undefined, this.takeTelAt());
    }
    const error =
      cause ??
      (reason === 'queue-full' || reason === 'concurrency-limit'
        ? new QueueFullError(shared.config.concurrency?.maxQueue ?? 0)
        : this.circuitOpenError(shared.breaker as CircuitBreaker));
    this.failWith(error, reason);
  }

  private circuitOpenError(breaker: CircuitBreaker): CircuitOpenError {
    const name = this.shared.config.name;
    return new CircuitOpenError(
      name === undefined
        ? { retryAfterMs: breaker.retryAfterMs() }
        : { retryAfterMs: breaker.retryAfterMs(), circuit: name },
    );
  }

  /**
   * Queues the call for a slot of `pool`. The pool's task is the call's hold
   * on the slot: it ends when the call and its last attempt have settled,
   * which may be after the caller's promise settled. The wait ends early when
   * the caller aborts or the call's deadline passes.
   */
  private queue(pool: SlotPool): void {
    // Attempt 1 starts after the wait, on a reading of its own.
    this.telAt = undefined;
    let signal = this.callerSignal;
    let deadline: AbortController | undefined;
    if (this.timeoutMs !== Number.POSITIVE_INFINITY) {
      deadline = new AbortController();
      signal = signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]);
    }
    this.phase = { name: 'queued', deadline };
    if (deadline !== undefined) {
      this.deadlineStartedAt = this.shared.wheel.schedule(this, Math.max(this.timeoutMs, 0));
    }
    pool
      .run(
        () =>
          new Promise<void>((end) => {
            this.slot = { kind: 'queued', end };
            this.begin();
          }),
        { signal },
      )
      .then(undefined, (error: unknown) => this.leftQueue(error));
  }

  /** The call left the queue without running: its caller aborted, or its deadline passed. */
  private leftQueue(error: unknown): void {
    this.phase = SETTLED;
    this.leaveDeadline();
    this.releasePermit('neutral');
    this.linked?.release();
    if (isDeadlineExceededError(error)) {
      this.tel?.deadlineExceeded('call');
      this.tel?.end('failure', 0, errorTypeOf(error), this.takeTelAt());
      this.failWith(error, 'error');
      return;
    }
    this.tel?.end('cancelled', 0, errorTypeOf(error), this.takeTelAt());
    this.reject(error);
  }

  /** The call holds its slot: it starts listening to its caller and runs attempt 1. */
  private begin(): void {
    const shared = this.shared;
    const signal = this.callerSignal;
    // Out of the queue: the deadline that ran while the call waited is re-armed by attempt 1.
    if (this.phase.name === 'queued') this.leaveDeadline();
    // A queued call whose signal aborted has left the pool's queue; this covers a synchronous abort race.
    if (signal?.aborted) {
      this.phase = SETTLED;
      this.releasePermit('neutral');
      this.tel?.end('cancelled', 0, undefined, this.takeTelAt());
      this.fail(abortError(signal));
      return;
    }
    shared.running++;
    if (signal !== undefined) this.stopListening = onAbort(signal, () => this.cancel());
    shared.config.budget?.recordRequest();
    this.runAttempt();
  }

  // ---- Attempts -----------------------------------------------------------

  private runAttempt(): void {
    const shared = this.shared;
    const config = shared.config;
    const n = ++this.attempt;
    if (config.throttle !== undefined) {
      const admitted = config.throttle.tryAcquire();
      if (!admitted.ok) {
        this.tel?.refused('throttled');
        if (n === 1) {
          this.finish('neutral', 'refused');
          if (shared.rejects.active) shared.rejects.emit({ reason: 'throttled' });
          this.failWith(admitted.error, 'throttled');
        } else {
          // A locally throttled retry ends the call with the operation's last error.
          const failure = this.lastFailure as Failure;
          this.finish(failure.verdict?.countForCircuit !== false ? 'failure' : 'neutral');
          this.failWith(failure.error, 'error');
        }
        return;
      }
    }
    const ctx = new AttemptContext(
      this as Call<unknown>,
      n,
      this.timed ? undefined : (this.callerSignal ?? neverAbortedSignal),
    );
    this.phase = { name: 'attempting', attempt: ctx };
    // An earlier attempt still running (abandoned, with no pool slot to wait for) holds nothing.
    this.stillRunning = undefined;
    const tel = this.tel;
    let now: number | undefined;
    if (tel !== undefined) {
      const at = this.telAt;
      now = this.takeTelAt();
      // Attempt 1 on the call's start reading (no queue wait) is implied by startCall's.
      if (at === undefined || n !== 1 || !(config.telemetry as SafeTelemetry).firstAttemptAtStart) {
        tel.attemptStart(n, now);
      }
    }
    if (this.timed) this.armDeadline(config, n, now);
    let result: T | PromiseLike<T>;
    try {
      result = this.fn(ctx);
    } catch (error) {
      this.attemptSettled(ctx, false, error);
      return;
    }
    if (!isThenable(result)) {
      this.attemptSettled(ctx, true, result);
      return;
    }
    this.stillRunning = ctx;
    forwardOutcome(ctx, result);
  }

  /**
   * Schedules attempt `n`'s deadline: its own timeout (derived per attempt when
   * `attemptTimeoutMs` was left out, see `AttemptTimeout`), or what is left of
   * the call's when that comes first (the engine never starts a retry at or
   * past it, so at least 1 ms is left).
   */
  private armDeadline(config: ProtectConfig, n: number, telNow: number | undefined): void {
    const shared = this.shared;
    const started = this.deadlineStartedAt;
    let left = Number.POSITIVE_INFINITY;
    if (this.timeoutMs !== Number.POSITIVE_INFINITY) {
      left = started === undefined ? this.timeoutMs : this.callDeadline() - config.clock();
    }
    const engine = config.engine;
    // A timed-out attempt is repeated within the attempts, and a probe never is.
    const retryMayFollow = engine !== undefined && n < engine.attempts && !this.isProbe;
    const timeout = config.attemptTimeout;
    const derivedAt = timeout.derived ? shared.wheel.time() : 0;
    const ms = Math.max(timeout.forAttempt(RUNNER_SCOPE, left, retryMayFollow, derivedAt), 1);
    // The call's deadline came first: the timeout event names the call's.
    this.timerMs = ms < left ? ms : this.timeoutMs;
    // The attempt's start as telemetry read it is the deadline's start too, when both read one clock.
    const now = shared.wheel.schedule(this, ms, shared.shareClock ? telNow : undefined);
    this.attemptStartedAt = now;
    if (started === undefined) this.deadlineStartedAt = now;
  }

  /** The call's absolute deadline on the runner's clock (`Infinity` for none). */
  private callDeadline(): number {
    if (this.timeoutMs === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
    if (this.deadlineAt === undefined) {
      const started = this.deadlineStartedAt;
      // The deadline started on the wheel's clock: carried over to the runner's as the time left.
      const elapsed = started === undefined ? 0 : this.shared.wheel.time() - started;
      this.deadlineAt = this.shared.config.clock() + this.timeoutMs - elapsed;
    }
    return this.deadlineAt;
  }

  /** The wheel's deadline passed (the queue's or the current attempt's), or its sleep failed (`timerError`). */
  expire(timerError: Error | undefined): Error {
    const phase = this.phase;
    if (phase.name === 'queued') {
      // The deadline passed in the queue: the call leaves it without running.
      const error = timerError ?? new DeadlineExceededError(this.timeoutMs);
      phase.deadline?.abort(error);
      return error;
    }
    const error = timerError ?? new DeadlineExceededError(this.timerMs);
    this.onDeadline(error);
    return error;
  }

  /** Deadline of the current attempt passed (`error`: `DeadlineExceededError`), or its timer failed. */
  private onDeadline(error: Error): void {
    if (this.phase.name !== 'attempting') return;
    const ctx = this.phase.attempt;
    if (ctx.done) return;
    const shared = this.shared;
    ctx.abort(error);
    if (shared.timeouts.active) {
      shared.timeouts.emit({ attempt: ctx.attempt, timeoutMs: this.timerMs });
    }
    const tel = this.tel;
    if (tel !== undefined) {
      const whole = shared.config.clock() >= this.callDeadline();
      tel.deadlineExceeded(whole ? 'call' : 'attempt');
      if (!shared.config.waitOnTimeout) {
        const now = (shared.config.telemetry as SafeTelemetry).clock();
        this.telAt = now;
        tel.attemptEnd(ctx.attempt, 'timeout', errorTypeOf(error), now);
      }
    }
    // 'wait': the attempt ends when the callback settles, so attempts never overlap.
    if (shared.config.waitOnTimeout) return;
    // Abandoned: its callback still runs (and keeps the slot), its outcome is no longer taken.
    ctx.done = true;
    this.attemptFailed(error);
  }

  /** The callback of attempt `ctx` settled. */
  attemptSettled(ctx: AttemptContext, ok: boolean, value: unknown): void {
    if (ctx === this.stillRunning) this.attemptStopped();
    if (ctx.done || this.settled) return;
    ctx.done = true;
    this.leaveDeadline();
    const tel = this.tel;
    if (tel !== undefined) {
      // The attempt's end is the call's end too when it ends the call: finish takes this reading.
      const now = (this.shared.config.telemetry as SafeTelemetry).clock();
      this.telAt = now;
      // A first attempt's success ends the call: finish tells both in one hook (see there).
      if (!ok || ctx.reason !== undefined || ctx.attempt !== 1) {
        tel.attemptEnd(
          ctx.attempt,
          ctx.reason !== undefined ? 'timeout' : ok ? 'success' : 'failure',
          ok && ctx.reason === undefined ? undefined : errorTypeOf(ctx.reason ?? value),
          now,
        );
      }
    }
    // Under 'wait' a timed-out attempt still fails with the deadline, whatever the callback did.
    if (ctx.reason !== undefined) this.attemptFailed(ctx.reason);
    else if (ok) this.succeed(value as T);
    else this.attemptFailed(value);
  }

  /** The callback of {@link Call.stillRunning} settled: what waited for it goes on. */
  private attemptStopped(): void {
    this.stillRunning = undefined;
    const owed = this.slotOwed;
    if (owed !== undefined) {
      this.slotOwed = undefined;
      this.giveBack(owed);
    } else if (this.phase.name === 'retry-due') this.runAttempt();
  }

  private succeed(value: T): void {
    const config = this.shared.config;
    if (this.timed && config.attemptTimeout.derived) {
      // A derived attempt timeout follows the runner's successful attempts.
      const now = this.shared.wheel.time();
      config.attemptTimeout.observe(RUNNER_SCOPE, now - this.attemptStartedAt, now);
    }
    this.inherited?.succeeded();
    config.throttle?.recordAccept();
    this.finish('success');
    this.fulfil(value);
  }

  /** An attempt failed: the policy judges it, the engine says whether and when to retry. */
  private attemptFailed(error: unknown): void {
    const config = this.shared.config;
    this.lastFailure = { error, verdict: undefined };
    let verdict: ErrorVerdict | undefined;
    if (this.policy !== undefined) {
      try {
        verdict = this.policy(error);
      } catch (policyError) {
        this.finish('neutral');
        this.fail(new ErrorPolicyError(error, policyError));
        return;
      }
      this.lastFailure = { error, verdict };
    }
    const counted = verdict?.countForCircuit !== false;
    // An error the backend handled (not a sign of overload) counts as an accept for the throttle.
    if (!counted) config.throttle?.recordAccept();
    const engine = config.engine;
    // A half-open probe is never retried: its failure re-opens the circuit, and the caller gets it.
    if (engine !== undefined && !this.isProbe) {
      const delay = engine.afterFailure(
        this.attempt,
        this.previousDelayMs,
        verdict,
        error,
        this.callDeadline(),
      );
      if (delay >= 0) {
        this.retryAfter(engine, error, delay);
        return;
      }
      if (delay === STOP_BUDGET) this.tel?.refused('budget-exhausted');
      else if (delay === STOP_DEADLINE) this.tel?.refused('deadline-expired');
    }
    // A probe that never reached the upstream (the verdict's neverSent) says nothing about it.
    const neutral = !counted || (verdict?.neverSent === true && this.isProbe);
    this.finish(neutral ? 'neutral' : 'failure');
    this.failWith(error, 'error');
  }

  private retryAfter(engine: AttemptEngine, error: unknown, delay: number): void {
    const shared = this.shared;
    this.phase = BACKING_OFF;
    this.previousDelayMs = delay;
    // The failed attempt's end is not the next one's start.
    this.telAt = undefined;
    this.tel?.retry(this.attempt, delay, errorTypeOf(error));
    const onRetry = shared.config.onRetry;
    if (shared.retries.active || onRetry !== undefined) {
      const event = { attempt: this.attempt, delayMs: delay, errorName: errorName(error) };
      if (shared.retries.active) shared.retries.emit(event);
      notify(onRetry, event);
    }
    // Never synchronous (0 ms is a microtask): a callback that throws synchronously must not recurse.
    engine.schedule(delay, () => this.backoffOver(), this.callerSignal);
  }

  private backoffOver(): void {
    if (this.phase.name !== 'backing-off') return;
    // The abandoned attempt still runs in the call's slot: the retry starts when it settles.
    if (this.stillRunning !== undefined && this.slot !== undefined) this.phase = RETRY_DUE;
    else this.runAttempt();
  }

  /** Caller cancellation. */
  private cancel(): void {
    if (this.settled) return;
    const error = abortError(this.callerSignal as AbortSignal);
    const running = this.stillRunning;
    if (running !== undefined) {
      // The caller stopped waiting: its running attempt gives the slot back at once, unless its
      // deadline already abandoned it (a retry was waiting for it): that one keeps it until it settles.
      if (running.reason === undefined) this.stillRunning = undefined;
      running.abort(error);
    }
    this.finish('neutral', 'cancelled');
    this.fail(error);
  }

  private leaveDeadline(): void {
    if (this.wheelSlot !== undefined) this.shared.wheel.cancel(this);
  }

  // ---- Settling -----------------------------------------------------------

  /** Leaves every shared structure; runs exactly once per started call. */
  private finish(
    outcome: CallOutcome,
    told: TelemetryCallOutcome = outcome === 'success' ? 'success' : 'failure',
  ): void {
    this.phase = SETTLED;
    const lastError = this.lastFailure?.error;
    if (this.limit !== undefined) this.limitOutcome = limitOutcomeOf(told, lastError);
    const shared = this.shared;
    const tel = this.tel;
    if (tel !== undefined) {
      const now = this.takeTelAt();
      // Only attempt 1's success (attemptSettled, which left its attemptEnd to this) ends a call
      // with success after one attempt: one hook for the attempt's end and the call's.
      if (told === 'success' && this.attempt === 1) tel.firstAttemptSucceeded(now);
      else {
        tel.end(
          told,
          told === 'refused' ? 0 : this.attempt,
          told === 'failure' ? errorTypeOf(lastError) : undefined,
          now,
        );
      }
    }
    shared.running--;
    this.leaveDeadline();
    // A failure's duration (known when timed) tells the circuit a call sent before its latest
    // failure from one sent since: a burst after a stall is not an outage.
    if (this.permit !== undefined) {
      const started = this.deadlineStartedAt;
      const ms =
        outcome === 'failure' && this.timed && started !== undefined
          ? shared.wheel.time() - started
          : undefined;
      this.releasePermit(outcome, ms);
    }
    this.stopListening?.();
    this.stopListening = undefined;
    this.linked?.release();
  }

  /** Gives the circuit its one outcome for the call, once. */
  private releasePermit(outcome: CallOutcome, durationMs?: number): void {
    const permit = this.permit;
    if (permit === undefined) return;
    this.permit = undefined;
    (this.shared.breaker as CircuitBreaker).release(permit, { outcome, durationMs });
  }

  /** Settles with `error`, or with the fallback's outcome when one applies. */
  private failWith(error: unknown, reason: ProtectFallbackEvent['reason']): void {
    const failure = this.lastFailure;
    // Without a policy every failure is retryable (protect's default).
    this.inherited?.failed(
      error,
      failure === undefined ? undefined : (failure.verdict ?? RETRYABLE),
    );
    const fallback = this.fallback;
    if (fallback === undefined || failure?.verdict?.failover === false) {
      this.fail(error);
      return;
    }
    const shared = this.shared;
    if (shared.fallbacks.active) shared.fallbacks.emit({ reason });
    try {
      this.fulfil(fallback(error, { signal: this.callerSignal ?? neverAbortedSignal }));
    } catch (fallbackError) {
      this.fail(fallbackError);
    }
  }

  /** Resolves the call's promise; its slot is given back once it has settled. */
  private fulfil(value: T | PromiseLike<T>): void {
    if (this.slot === undefined && this.limit === undefined) {
      this.resolve(value);
      return;
    }
    if (isThenable(value)) {
      // A fallback's promise keeps the slot until it settles, as the pool's own wrapper would.
      const settled = Promise.resolve(value);
      this.resolve(settled);
      settled.then(
        () => this.giveBack(true),
        () => this.giveBack(false),
      );
      return;
    }
    this.resolve(value);
    this.giveBack(true);
  }

  /** Rejects the call's promise and gives its slot back. */
  private fail(error: unknown): void {
    this.reject(error);
    if (this.slot !== undefined || this.limit !== undefined) this.giveBack(false);
  }

  /** Gives the call's slots back once nothing of the call runs any more (see {@link Call.stillRunning}). */
  private giveBack(ok: boolean): void {
    if (this.stillRunning !== undefined) {
      this.slotOwed = ok;
      return;
    }
    const slot = this.slot;
    this.slot = undefined;
    if (slot?.kind === 'taken') slot.pool.give(ok);
    else if (slot?.kind === 'queued') slot.end();
    const limit = this.limit;
    this.limit = undefined;
    limit?.release(this.limitOutcome);
  }

  /** The pending telemetry clock reading ({@link Call.telAt}), else a new one; leaves none pending. */
  private takeTelAt(): number {
    const at = this.telAt;
    if (at === undefined) return (this.shared.config.telemetry as SafeTelemetry).clock();
    this.telAt = undefined;
    return at;
  }
}

/**
 * What a call's end tells the adaptive limit: an answer (success, or an error
 * of the target's) is a latency sample; a deadline that passed is a drop; a
 * call its caller cancelled, or the throttle refused, tells nothing.
 */
function limitOutcomeOf(told: TelemetryCallOutcome, lastError: unknown): LimitOutcome {
  if (told === 'success') return 'answered';
  if (told !== 'failure') return 'ignored';
  return isDeadlineExceededError(lastError) ? 'dropped' : 'answered';
}
