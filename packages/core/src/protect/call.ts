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
import { forwardOutcome, newPromiseInto, noSettler, type OutcomeSink } from '../internal/settle.js';
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
  /** Calls that succeeded on their first attempt and hold nothing: reused by the next calls. */
  readonly spare: Call<unknown>[];
}

/** The verdict on a failure when the runner has no policy: everything is retried. */
const RETRYABLE: ErrorVerdict = Object.freeze({});

/** A runner's attempts share one latency: the derived attempt timeout's scope. */
const RUNNER_SCOPE = '';

/** Most spare calls a runner keeps (one per call in flight at its busiest, up to this). */
const MAX_SPARE = 256;

/**
 * The context handed to one attempt. Its `signal` is created lazily: an attempt
 * whose callback never reads it costs no `AbortController`, and a runner without
 * a timeout passes the caller's own signal through. Otherwise the signal is the
 * attempt's own: no other call's deadline can abort it. It keeps what its
 * getters need itself: the callback may hold it after its call object was reused.
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

  /** The callback's promise settled (an attempt its call observes through `forwardOutcome`). */
  onOutcome(ok: boolean, value: unknown): void {
    this.call.attemptSettled(this, ok, value);
  }

  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

const noFunction: ProtectedFunction<never> = () => {
  throw new Error('protect: a spare call ran');
};

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/**
 * One `protect` call: a small state machine (admit → attempt → judge → back
 * off → attempt … → settle) driven by callbacks. It is also its own
 * timer-wheel node and caller-signal listener, and it watches its attempt's
 * promise through two functions it makes once: a call that succeeds on its
 * first attempt and holds nothing any more goes back to its runner's spares
 * ({@link Call.init} readies it for the next call), so the success path
 * allocates the caller's promise, the attempt's context and one `then`.
 * @internal
 */
export class Call<T> extends WheelEntry {
  private fn: ProtectedFunction<T> = noFunction;
  callerSignal: AbortSignal | undefined = undefined;
  private fallback: ProtectFallback<T> | undefined = undefined;
  private policy: ErrorPolicy | undefined = undefined;
  private attempt = 0;
  /**
   * The current attempt. On the success path it is the only new object the
   * call object (long-lived, reused) is given besides its promise's settlers:
   * each such store costs a write barrier's slow path, so the watched and the
   * running attempt are flags about `ctx` whenever they are `ctx`.
   */
  private ctx: AttemptContext | undefined = undefined;
  /** An attempt is watched through {@link Call.onValue}/{@link Call.onError} (others go through `forwardOutcome`): `ctx`, or `watchedEarlier`. */
  private watching = false;
  /** The watched attempt, once a later attempt replaced it as `ctx` (it timed out and was abandoned). */
  private watchedEarlier: AttemptContext | undefined = undefined;
  private permit = -1;
  private settled = false;
  /** The call settled with its first attempt's value (the one case in which it is reused). */
  private won = false;
  private allowFallback = true;
  resolve: (value: T | PromiseLike<T>) => void = noSettler;
  reject: (error: unknown) => void = noSettler;
  /** The pool slot this call took synchronously; given back by {@link Call.giveBack}. */
  slot: SlotPool | undefined = undefined;
  /** For a call that queued: ends the pool task that holds its slot. */
  private hold: (() => void) | undefined = undefined;
  /** While the call waits in the queue under a deadline: ends the wait when the deadline passes. */
  private queueWait: AbortController | undefined = undefined;
  /** The call waited for its slot: its deadline started before attempt 1. */
  private queuedFor = false;
  /** The call's slot under the adaptive limit (`concurrency.adaptive`); given back by {@link Call.giveBack}. */
  limit: LimitPermit | undefined = undefined;
  /** What the call's end tells the adaptive limit, once it ended. */
  private limitOutcome: LimitOutcome = 'ignored';
  /**
   * The callback of the current attempt (`ctx`) has not settled yet, even if
   * it timed out and was abandoned. (A retry never starts while an abandoned
   * attempt holds the call's slot, so an earlier attempt still running holds
   * nothing: only the current one's is tracked.)
   */
  private live = false;
  /** The call settled while the live attempt still ran: whether its slot goes back as a success, once it settles. */
  private owed: boolean | undefined = undefined;
  /** A retry is due but waits for the abandoned attempt, which still holds the slot. */
  private retryWaiting = false;
  private next: (() => void) | undefined = undefined;
  private lastError: unknown = undefined;
  /** Whether the last failure counts for the circuit (its verdict's `countForCircuit`). */
  private lastCounted = true;
  /**
   * When the call's first attempt was armed, on the wheel's clock (the read
   * the wheel made anyway); the call's deadline is derived from it only once
   * an attempt fails, so the success path reads one clock, not two.
   */
  private startedAt = 0;
  /** The call's absolute deadline on the runner's clock (`timeoutMs`), once derived; NaN before. */
  private deadlineAt = Number.NaN;
  /** This call's `timeoutMs`: the runner's, or less inside a bound handler (what is left of the inbound deadline). */
  private timeoutMs = Number.POSITIVE_INFINITY;
  /** Whether this call's attempts run under a deadline (the runner's {@link RunnerShared.timed}, or an inherited one). */
  private timed = false;
  /** What the call inherits from the inbound call it runs under; `undefined` outside a bound handler. */
  private inherited: Inheritance | undefined = undefined;
  /** The caller's signal linked to the inbound call's cancellation, released when the call settles. */
  private linked: LinkedSignal | undefined = undefined;
  /** Stops waiting on the caller's signal, once the call has started. */
  private stopListening: (() => void) | undefined = undefined;
  /** The verdict on the last failure, told to the inbound call when the call fails. */
  private lastVerdict: ErrorVerdict | undefined = undefined;
  /** The configured deadline the current attempt's timer stands for, in ms. */
  private timerMs = 0;
  /** Wheel time the current attempt's deadline was armed. */
  private attemptStartedAt = 0;
  /** The wait before the current attempt (0 for the first). */
  private previousDelayMs = 0;
  /** What hears this call's telemetry; `undefined` (one check per event) without the option. A spare keeps its last one, ended. */
  private tel: SafeCallTelemetry | undefined = undefined;
  /**
   * A telemetry clock reading the next event shares (`undefined` for none):
   * the call's start, taken by attempt 1 (or a refusal); then the end of the
   * attempt that may end the call, taken by {@link Call.finish}. So a
   * success reads the clock twice, once of them shared with the deadline.
   * `undefined`, not NaN, for none: the field then holds the clock's own
   * number as it is, so handing it on allocates nothing (a field that only
   * ever holds numbers keeps them unboxed, and each read hands out a new box).
   */
  private telAt: number | undefined = undefined;
  /** Settlement of the watched attempt's promise: made once per call object, reused with it. */
  private readonly onValue = (value: unknown): void => this.watchedSettled(true, value);
  private readonly onError = (error: unknown): void => this.watchedSettled(false, error);

  constructor(readonly shared: RunnerShared) {
    super();
  }

  /**
   * Readies a new or spare call object for one call. A spare comes back only
   * after a first-attempt success, so the fields of the failure path (the
   * abandoned attempt, the retry, the queue hold) are already in their start state.
   */
  init(
    fn: ProtectedFunction<T>,
    callerSignal: AbortSignal | undefined,
    fallback: ProtectFallback<T> | undefined,
    policy: ErrorPolicy | undefined,
  ): this {
    this.fn = fn;
    this.callerSignal = callerSignal;
    this.fallback = fallback;
    this.policy = policy;
    this.attempt = 0;
    this.ctx = undefined;
    this.permit = -1;
    this.settled = false;
    this.won = false;
    this.allowFallback = true;
    this.lastCounted = true;
    this.deadlineAt = Number.NaN;
    this.queuedFor = false;
    this.previousDelayMs = 0;
    this.limitOutcome = 'ignored';
    this.timeoutMs = this.shared.config.timeoutMs;
    this.timed = this.shared.timed;
    this.inherited = undefined;
    this.linked = undefined;
    this.stopListening = undefined;
    this.lastVerdict = undefined;
    const config = this.shared.config;
    const telemetry = config.telemetry;
    if (telemetry === undefined) this.tel = undefined;
    else {
      const now = telemetry.clock();
      this.telAt = now;
      // A spare call still holds its last call's telemetry, ended: the telemetry may ready it again.
      this.tel = telemetry.startCall(config.target, now, this.tel);
    }
    return this;
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

  /** The pending telemetry clock reading ({@link Call.telAt}), else a new one; leaves none pending. */
  private takeTelAt(): number {
    const at = this.telAt;
    if (at === undefined) return (this.shared.config.telemetry as SafeTelemetry).clock();
    this.telAt = undefined;
    return at;
  }

  /** Gives a call that won on its first attempt, and that nothing refers to any more, back to the runner. */
  private recycle(): void {
    const spare = this.shared.spare;
    if (spare.length >= MAX_SPARE) return;
    // Drop what the caller handed in, so a spare keeps no user object alive.
    this.fn = noFunction as ProtectedFunction<T>;
    this.callerSignal = undefined;
    this.fallback = undefined;
    this.policy = undefined;
    this.ctx = undefined;
    // `tel` stays: its call has ended and nothing else refers to it, so the next call may reuse it.
    this.resolve = noSettler;
    this.reject = noSettler;
    spare.push(this as Call<unknown>);
  }

  /** The watched attempt's promise settled. */
  private watchedSettled(ok: boolean, value: unknown): void {
    const ctx = this.watchedEarlier ?? (this.ctx as AttemptContext);
    this.watching = false;
    this.watchedEarlier = undefined;
    this.attemptSettled(ctx, ok, value);
    // Reused only when nothing can reach it any more: it settled with this first attempt's value,
    // so no retry timer, no other attempt, no fallback and no deadline refers to it, its slot and
    // permit are back and it left the caller's signal.
    if (this.won && this.attempt === 1) this.recycle();
  }

  /** The wheel's deadline for the current attempt passed, or its sleep failed (`timerError`). */
  expire(timerError: Error | undefined): Error {
    const wait = this.queueWait;
    if (wait !== undefined) {
      // The deadline passed in the queue: the call leaves it without running.
      const error = timerError ?? new DeadlineExceededError(this.timeoutMs);
      wait.abort(error);
      return error;
    }
    const error = timerError ?? new DeadlineExceededError(this.timerMs);
    this.onDeadline(error);
    return error;
  }

  private promise(): Promise<T> {
    return newPromiseInto<T>(this);
  }

  /** Resolves the call's promise; its slot is given back once it has settled. */
  private fulfil(value: T | PromiseLike<T>): void {
    if (this.slot === undefined && this.hold === undefined && this.limit === undefined) {
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
    if (this.slot !== undefined || this.hold !== undefined || this.limit !== undefined) {
      this.giveBack(false);
    }
  }

  /**
   * Gives the call's slot back once nothing of the call runs any more: an
   * attempt abandoned at its deadline keeps the slot until its callback
   * settles, so operations running at the backend never exceed `concurrency`.
   */
  private giveBack(ok: boolean): void {
    if (this.live) {
      this.owed = ok;
      return;
    }
    const slot = this.slot;
    if (slot !== undefined) {
      this.slot = undefined;
      slot.give(ok);
      return;
    }
    const limit = this.limit;
    if (limit !== undefined) {
      this.limit = undefined;
      limit.release(this.limitOutcome);
      return;
    }
    const hold = this.hold;
    this.hold = undefined;
    hold?.();
  }

  /** The callback of the live attempt settled: release what waited for it. */
  private liveSettled(): void {
    this.live = false;
    const owed = this.owed;
    if (owed !== undefined) {
      this.owed = undefined;
      this.retryWaiting = false;
      this.giveBack(owed);
    } else if (this.retryWaiting) {
      this.retryWaiting = false;
      if (!this.settled) this.runAttempt();
    }
  }

  /**
   * Admits the call and runs it: its deadline starts first (an inherited one
   * included), then the circuit, the rate limit and the slot, in that order
   * (see `admitCall`). A call that waits for a slot waits within its deadline.
   */
  admit(parts: AdmissionParts, criticality: Criticality): Promise<T> {
    const p = this.promise();
    if (this.inherited !== undefined && !this.inheritDeadline(this.inherited)) return p;
    const admission = admitCall(parts, criticality);
    if (!admission.admitted) {
      this.refuseNow(admission.reason, admission.error);
      return p;
    }
    this.permit = admission.permit;
    this.limit = admission.limit;
    if (admission.slot === 'queue') {
      this.queue(parts.pool as SlotPool);
      return p;
    }
    if (admission.slot === 'taken') this.slot = parts.pool as SlotPool;
    this.begin();
    return p;
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
    const shared = this.shared;
    let signal = this.callerSignal;
    if (this.timeoutMs !== Number.POSITIVE_INFINITY) {
      const wait = new AbortController();
      this.queueWait = wait;
      signal = signal === undefined ? wait.signal : AbortSignal.any([signal, wait.signal]);
      this.startedAt = shared.wheel.schedule(this, Math.max(this.timeoutMs, 0));
    }
    pool
      .run(
        () =>
          new Promise<void>((resolve) => {
            this.hold = resolve;
            this.begin();
          }),
        { signal },
      )
      .then(undefined, (error: unknown) => this.leftQueue(error));
  }

  /** The call left the queue without running: its caller aborted, or its deadline passed. */
  private leftQueue(error: unknown): void {
    this.settled = true;
    this.queueWait = undefined;
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

  private begin(): void {
    const shared = this.shared;
    const signal = this.callerSignal;
    if (this.queueWait !== undefined) {
      // Out of the queue: the deadline that ran while the call waited is re-armed by attempt 1.
      this.queueWait = undefined;
      this.queuedFor = true;
      this.leaveDeadline();
    }
    // A queued call whose signal aborted has left the pool's queue; this covers a synchronous abort race.
    if (signal?.aborted) {
      this.settled = true;
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

  /** Takes the inherited deadline when it is earlier; false (the call failed) when it has passed. */
  private inheritDeadline(inherited: Inheritance): boolean {
    const left = inherited.remainingMs();
    if (left <= 0) {
      this.settled = true;
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
    this.settled = true;
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

  private runAttempt(): void {
    const shared = this.shared;
    const config = shared.config;
    const n = ++this.attempt;
    if (shared.config.throttle !== undefined) {
      const admitted = shared.config.throttle.tryAcquire();
      if (!admitted.ok) {
        this.tel?.refused('throttled');
        if (n === 1) {
          this.finish('neutral', 'refused');
          if (shared.rejects.active) shared.rejects.emit({ reason: 'throttled' });
          this.failWith(admitted.error, 'throttled');
        } else {
          // A locally throttled retry ends the call with the operation's last error.
          this.finish(this.lastCounted ? 'failure' : 'neutral');
          this.failWith(this.lastError, 'error');
        }
        return;
      }
    }
    const ctx = new AttemptContext(
      this as Call<unknown>,
      n,
      this.timed ? undefined : (this.callerSignal ?? neverAbortedSignal),
    );
    // The watched attempt stays watched: it is kept by name once `ctx` moves on.
    if (this.watching && this.watchedEarlier === undefined) this.watchedEarlier = this.ctx;
    this.ctx = ctx;
    this.live = false;
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
    this.live = true;
    if (!this.watching) {
      // Promise.resolve returns a native promise as it is, and adopts any other thenable the way
      // `await` does (a `then` that throws becomes a rejection).
      this.watching = true;
      Promise.resolve(result).then(this.onValue, this.onError);
    } else {
      // An abandoned attempt is still watched: this one reports through its own context.
      forwardOutcome(ctx, result);
    }
  }

  /**
   * Schedules attempt `n`'s deadline: its own timeout (derived per attempt when
   * `attemptTimeoutMs` was left out, see `AttemptTimeout`), or what is left of
   * the call's when that comes first (the engine never starts a retry at or
   * past it, so at least 1 ms is left).
   */
  private armDeadline(config: ProtectConfig, n: number, telNow: number | undefined): void {
    const shared = this.shared;
    let left = Number.POSITIVE_INFINITY;
    if (this.timeoutMs !== Number.POSITIVE_INFINITY) {
      left = n === 1 && !this.queuedFor ? this.timeoutMs : this.callDeadline() - config.clock();
    }
    const engine = config.engine;
    // A timed-out attempt is repeated within the attempts, and a probe never is.
    const retryMayFollow =
      engine !== undefined && n < engine.attempts && !isProbePermit(this.permit);
    const timeout = config.attemptTimeout;
    const derivedAt = timeout.derived ? shared.wheel.time() : 0;
    const ms = Math.max(timeout.forAttempt(RUNNER_SCOPE, left, retryMayFollow, derivedAt), 1);
    // The call's deadline came first: the timeout event names the call's.
    this.timerMs = ms < left ? ms : this.timeoutMs;
    // The attempt's start as telemetry read it is the deadline's start too, when both read one clock.
    const now = shared.wheel.schedule(this, ms, shared.shareClock ? telNow : undefined);
    this.attemptStartedAt = now;
    if (n === 1 && !this.queuedFor) this.startedAt = now;
  }

  /**
   * The call's absolute deadline on the runner's clock (`Infinity` for none):
   * its start, read on the wheel's clock when the first attempt was armed,
   * carried over to the runner's clock as the time left.
   */
  private callDeadline(): number {
    const config = this.shared.config;
    if (this.timeoutMs === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
    if (Number.isNaN(this.deadlineAt)) {
      const elapsed = this.shared.wheel.time() - this.startedAt;
      this.deadlineAt = config.clock() + this.timeoutMs - elapsed;
    }
    return this.deadlineAt;
  }

  /** Deadline of the current attempt passed (`error`: `DeadlineExceededError`), or its timer failed. */
  private onDeadline(error: Error): void {
    const ctx = this.ctx;
    if (this.settled || ctx === undefined || ctx.done) return;
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
    ctx.done = true;
    this.attemptFailed(error);
  }

  /** The callback of attempt `ctx` settled. */
  attemptSettled(ctx: AttemptContext, ok: boolean, value: unknown): void {
    if (this.live && ctx === this.ctx) this.liveSettled();
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

  private succeed(value: T): void {
    const shared = this.shared;
    if (this.timed && shared.config.attemptTimeout.derived) {
      // A derived attempt timeout follows the runner's successful attempts.
      const now = shared.wheel.time();
      shared.config.attemptTimeout.observe(RUNNER_SCOPE, now - this.attemptStartedAt, now);
    }
    this.won = true;
    this.inherited?.succeeded();
    this.shared.config.throttle?.recordAccept();
    this.finish('success');
    this.fulfil(value);
  }

  private attemptFailed(error: unknown): void {
    const shared = this.shared;
    const config = shared.config;
    this.lastError = error;
    let verdict: ErrorVerdict | undefined;
    if (this.policy !== undefined) {
      try {
        verdict = this.policy(error);
      } catch (policyError) {
        this.finish('neutral');
        this.fail(new ErrorPolicyError(error, policyError));
        return;
      }
    }
    const counted = verdict?.countForCircuit !== false;
    this.lastCounted = counted;
    // Without a policy every failure is retryable (protect's default).
    this.lastVerdict = verdict ?? RETRYABLE;
    // An error the backend handled (not a sign of overload) counts as an accept for the throttle.
    if (!counted) shared.config.throttle?.recordAccept();
    this.allowFallback = verdict?.failover !== false;
    const engine = config.engine;
    // A half-open probe is never retried: its failure re-opens the circuit, and the caller gets it.
    if (engine !== undefined && !isProbePermit(this.permit)) {
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
    const neutral = !counted || (verdict?.neverSent === true && isProbePermit(this.permit));
    this.finish(neutral ? 'neutral' : 'failure');
    this.failWith(error, 'error');
  }

  private retryAfter(engine: AttemptEngine, error: unknown, delay: number): void {
    const shared = this.shared;
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
    // Created once per call, on its first retry: the success path never pays for it.
    let next = this.next;
    if (next === undefined) {
      next = () => {
        if (this.settled) return;
        // The abandoned attempt still runs in the call's slot: the retry starts when it settles.
        if (this.live && (this.slot !== undefined || this.hold !== undefined)) {
          this.retryWaiting = true;
        } else this.runAttempt();
      };
      this.next = next;
    }
    // Never synchronous (0 ms is a microtask): a callback that throws synchronously must not recurse.
    engine.schedule(delay, next, this.callerSignal);
  }

  /** Caller cancellation. */
  private cancel(): void {
    if (this.settled) return;
    const error = abortError(this.callerSignal as AbortSignal);
    // The caller stopped waiting: its running attempt gives the slot back at once, unless it already
    // timed out (a retry was waiting for it), in which case it keeps the slot until it settles.
    if (this.live && this.ctx?.reason === undefined) this.live = false;
    this.ctx?.abort(error);
    this.finish('neutral', 'cancelled');
    this.fail(error);
  }

  private leaveDeadline(): void {
    if (this.wheelSlot !== undefined) this.shared.wheel.cancel(this);
  }

  /** Leaves every shared structure; runs exactly once per started call. */
  private finish(
    outcome: CallOutcome,
    told: TelemetryCallOutcome = outcome === 'success' ? 'success' : 'failure',
  ): void {
    this.settled = true;
    if (this.limit !== undefined) this.limitOutcome = limitOutcomeOf(told, this.lastError);
    const shared = this.shared;
    const tel = this.tel;
    let telNow: number | undefined;
    if (tel !== undefined) {
      telNow = this.takeTelAt();
      // Only attempt 1's success (attemptSettled, which left its attemptEnd to this) ends a call
      // with success after one attempt: one hook for the attempt's end and the call's.
      if (told === 'success' && this.attempt === 1) tel.firstAttemptSucceeded(telNow);
      else {
        tel.end(
          told,
          told === 'refused' ? 0 : this.attempt,
          told === 'failure' ? errorTypeOf(this.lastError) : undefined,
          telNow,
        );
      }
    }
    shared.running--;
    this.leaveDeadline();
    if (this.permit >= 0) {
      // A failure's duration (known when timed, read on failures only) tells the circuit a call
      // sent before its latest failure from one sent since: a burst after a stall is not an outage.
      const ms =
        outcome === 'failure' && this.timed ? shared.wheel.time() - this.startedAt : undefined;
      this.releasePermit(outcome, ms);
    }
    this.stopListening?.();
    this.stopListening = undefined;
    this.linked?.release();
  }

  /** Gives the circuit its one outcome for the call, once. */
  private releasePermit(outcome: CallOutcome, durationMs?: number): void {
    if (this.permit < 0) return;
    const permit = this.permit;
    this.permit = -1;
    (this.shared.breaker as CircuitBreaker).release(permit, { outcome, durationMs });
  }

  /** Settles with `error`, or with the fallback's outcome when one applies. */
  private failWith(error: unknown, reason: ProtectFallbackEvent['reason']): void {
    this.inherited?.failed(error, this.lastVerdict);
    const fallback = this.fallback;
    if (fallback === undefined || !this.allowFallback) {
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
