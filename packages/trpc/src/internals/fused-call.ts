import type { CallOutcome, CircuitBreaker, Pool, TokenBucket } from '@breakwater/core';
import type {
  Operation,
  OperationLink,
  OperationResultEnvelope,
  TRPCClientError,
} from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import type { Observable, Observer, Unsubscribable } from '@trpc/server/observable';
import { type CircuitSettings, circuitRefusal } from '../circuit-breaker-link.js';
import { isRepeatable } from '../context.js';
import { deadlineRefusal } from '../deadline-link.js';
import { type RetrySettings, retryDelay } from '../retry-link.js';
import { startTimerWith, stopTimer, type TimerHandle } from '../time/timer.js';
import { aborted, refusal } from './errors.js';
import { isAnswer } from './results.js';

/** @internal */
export type Envelope = OperationResultEnvelope<unknown, TRPCClientError<AnyRouter>>;
/** @internal */
export type Next = (op: Operation) => Observable<Envelope, TRPCClientError<AnyRouter>>;

/**
 * What `resilienceLink` runs for a query or mutation in one piece: the
 * resolved settings of the bulkhead, rate limit (reject mode), deadline,
 * retry and circuit links it composes, each `undefined` when left out.
 * @internal
 */
export interface FusedPlan {
  pool: Pool | undefined;
  bucket: TokenBucket | undefined;
  cost: ((op: Operation) => number) | undefined;
  timeoutFor: ((op: Operation) => number | undefined) | undefined;
  retry: RetrySettings | undefined;
  circuit: CircuitSettings | undefined;
}

function expireCall(call: FusedCall): void {
  call.expire();
}

/**
 * One query or mutation through the whole stack, with the behaviour of
 * `bulkheadLink` → `rateLimitLink` → `deadlineLink` → `retryLink` →
 * `circuitBreakerLink` composed in that order, but as one object: it is the
 * observer of every attempt, the caller's abort listener and the teardown,
 * so a call that succeeds first time allocates no closure and one
 * observable instead of five. A call that needs the bulkhead's queue is not
 * started here (`start` returns false): the composed links run it.
 * @internal
 */
export class FusedCall implements Observer<Envelope, unknown>, Unsubscribable {
  /** The caller was told (or left): nothing more goes up. */
  private done = false;
  private slot = false;
  private timer: TimerHandle | undefined = undefined;
  private ms = 0;
  /** `this` is registered on `op.signal`. */
  private listening = false;
  private repeatable = false;
  private attempt = 0;
  private previousDelay: number | undefined = undefined;
  /** An attempt is subscribed below and has not ended. */
  private inFlight = false;
  private current: Unsubscribable | undefined = undefined;
  private sleeper: AbortController | undefined = undefined;
  private breaker: CircuitBreaker | undefined = undefined;
  private permit = -1;
  private startedAt = 0;

  constructor(
    private readonly plan: FusedPlan,
    private readonly op: Operation,
    private readonly nextLink: Next,
    private readonly observer: Partial<Observer<Envelope, unknown>>,
  ) {}

  /** Starts the call; false when it must wait for a bulkhead slot (nothing was taken). */
  start(): boolean {
    const { plan, op } = this;
    const signal = op.signal;
    if (plan.pool) {
      if (signal?.aborted || !plan.pool.tryTake()) return false;
      this.slot = true;
    }
    if (plan.bucket) {
      const taken = plan.bucket.tryAcquire(plan.cost ? plan.cost(op) : 1);
      if (!taken.ok) {
        this.fail(refusal(taken.error));
        return true;
      }
    }
    const ms = plan.timeoutFor?.(op);
    if (ms !== undefined && Number.isFinite(ms)) {
      if (signal?.aborted) {
        this.fail(aborted(signal));
        return true;
      }
      this.ms = ms;
      this.timer = startTimerWith(Math.max(0, ms), expireCall, this);
      this.listen();
    }
    if (plan.retry) {
      plan.retry.budget?.recordRequest();
      this.repeatable = plan.retry.attempts > 1 && isRepeatable(op, plan.retry.retryMutations);
    }
    this.send();
    return true;
  }

  // ---------------------------------------------------------------- attempts

  private send(): void {
    this.attempt++;
    const circuit = this.plan.circuit;
    if (circuit) {
      const breaker = circuit.breakerFor(this.op.path);
      const permit = breaker.tryAcquire();
      if (permit < 0) {
        this.attemptFailed(circuitRefusal(circuit, breaker, this.op.path));
        return;
      }
      this.breaker = breaker;
      this.permit = permit;
      this.startedAt = circuit.clock();
    }
    this.inFlight = true;
    const subscription = this.nextLink(this.op).subscribe(this);
    // An attempt that ended during subscribe has been handled already.
    if (this.inFlight) this.current = subscription;
  }

  next(envelope: Envelope): void {
    if (!this.inFlight) return;
    if (isAnswer(envelope)) this.release('success');
    if (!this.done) this.observer.next?.(envelope);
  }

  error(cause: unknown): void {
    if (!this.inFlight) return;
    this.inFlight = false;
    this.current = undefined;
    const circuit = this.plan.circuit;
    if (circuit && this.permit >= 0) {
      this.release(
        circuit.classify(cause, this.op).countForCircuit === false ? 'neutral' : 'failure',
      );
    }
    this.attemptFailed(cause);
  }

  complete(): void {
    if (!this.inFlight) return;
    this.inFlight = false;
    this.current = undefined;
    this.release('success');
    if (this.done) return;
    this.done = true;
    this.settle();
    this.observer.complete?.();
  }

  private attemptFailed(cause: unknown): void {
    if (this.done) return;
    const retry = this.plan.retry;
    const delay =
      retry && this.repeatable
        ? retryDelay(retry, this.op, cause, this.attempt, this.previousDelay)
        : undefined;
    if (delay === undefined) {
      this.fail(cause);
      return;
    }
    const error = cause as TRPCClientError<AnyRouter>;
    const { op } = this;
    retry?.onRetry?.({
      path: op.path,
      type: op.type,
      attempt: this.attempt,
      delayMs: delay,
      error,
    });
    this.previousDelay = delay;
    this.wait(delay, error);
  }

  private wait(delay: number, error: unknown): void {
    const sleeper = new AbortController();
    this.sleeper = sleeper;
    // Without a deadline nobody listens to the caller's signal yet: the sleep must.
    this.listen();
    (this.plan.retry as RetrySettings).sleep(delay, sleeper.signal).then(
      () => {
        if (this.sleeper !== sleeper) return;
        this.sleeper = undefined;
        if (this.done) return;
        const signal = this.op.signal;
        if (signal?.aborted) {
          this.fail(aborted(signal));
          return;
        }
        // As with the composed links, an attempt's abort is the terminating link's to report.
        if (this.timer === undefined) this.unlisten();
        this.send();
      },
      () => {
        if (this.sleeper !== sleeper) return;
        this.sleeper = undefined;
        this.fail(error);
      },
    );
  }

  // ---------------------------------------------------------------- endings

  /** The deadline passed first. */
  expire(): void {
    this.timer = undefined;
    this.end(deadlineRefusal(this.op, this.ms));
  }

  /** The caller's `op.signal` aborted (an EventListener object: no closure per call). */
  handleEvent(): void {
    this.end(aborted(this.op.signal as AbortSignal));
  }

  /** Teardown from above (also called by tRPC after the call settled). */
  unsubscribe(): void {
    this.done = true;
    this.stopBelow();
    this.settle();
  }

  /** Ends the call early with `error`, dropping what runs below. */
  private end(error: unknown): void {
    if (this.done) return;
    this.stopBelow();
    this.fail(error);
  }

  private fail(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.settle();
    this.observer.error?.(error);
  }

  /** Drops a running attempt (neutral for the circuit: the caller left) or a backoff sleep. */
  private stopBelow(): void {
    const sleeper = this.sleeper;
    this.sleeper = undefined;
    sleeper?.abort();
    if (this.inFlight) {
      this.inFlight = false;
      this.release('neutral');
      const current = this.current;
      this.current = undefined;
      current?.unsubscribe();
    }
  }

  /** Gives back the timer, the abort listener and the bulkhead slot, once. */
  private settle(): void {
    stopTimer(this.timer);
    this.timer = undefined;
    this.unlisten();
    if (this.slot) {
      this.slot = false;
      (this.plan.pool as Pool).give(true);
    }
  }

  private listen(): void {
    const signal = this.op.signal;
    if (this.listening || !signal) return;
    this.listening = true;
    signal.addEventListener('abort', this, { once: true });
  }

  private unlisten(): void {
    if (!this.listening) return;
    this.listening = false;
    this.op.signal?.removeEventListener('abort', this);
  }

  private release(outcome: CallOutcome): void {
    const breaker = this.breaker;
    if (breaker === undefined || this.permit < 0) return;
    const permit = this.permit;
    this.permit = -1;
    breaker.release(
      permit,
      outcome,
      (this.plan.circuit as CircuitSettings).clock() - this.startedAt,
    );
  }
}

/**
 * The observable `resilienceLink` returns for a query or mutation: each
 * subscription runs one {@link FusedCall} (or, when the bulkhead must queue,
 * the composed links), so a call costs this object and its call, not
 * `observable()`'s closures. Like tRPC's observables it is cold, ends once,
 * and stops emitting after its teardown.
 * @internal
 */
export class FusedObservable {
  constructor(
    private readonly plan: FusedPlan,
    private readonly op: Operation,
    private readonly nextLink: Next,
    private readonly composed: OperationLink<AnyRouter>,
  ) {}

  subscribe(observer: Partial<Observer<Envelope, unknown>>): Unsubscribable {
    const call = new FusedCall(this.plan, this.op, this.nextLink, observer);
    if (call.start()) return call;
    return this.composed({ op: this.op, next: this.nextLink }).subscribe(observer);
  }

  pipe(...operations: ((source: unknown) => unknown)[]): unknown {
    let result: unknown = this;
    for (const operation of operations) result = operation(result);
    return result;
  }
}
