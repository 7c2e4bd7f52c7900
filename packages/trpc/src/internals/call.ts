import {
  type CallOutcome,
  type CircuitBreaker,
  CircuitOpenError,
  type ErrorVerdict,
  isDeadlineExceededError,
  type TelemetryTarget,
} from '@breakwater/core';
import { isProbePermit } from '@breakwater/core/breaker';
import {
  type AdaptiveLimiters,
  type AttemptEngine,
  type AttemptTimeout,
  admitCall,
  criticalityOf,
  onAbort,
  type PropagatePlan,
  type RetryBudgetLike,
  refusalOf,
  type SafeCallTelemetry,
  type SafeTelemetry,
  sharedTimerWheel,
  WheelEntry,
} from '@breakwater/core/internal';
import { type Clock, systemClock } from '@breakwater/core/time';
import type { LimitOutcome, LimitPermit, Pool, TokenBucket } from '@breakwater/core/types';
import type { Operation, OperationResultEnvelope, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import type { Observable, Observer, Unsubscribable } from '@trpc/server/observable';
import { type BreakwaterOperationContext, contextFault } from '../context.js';
import { hedgeFailed, hedgeTimer } from '../hedge-link.js';
import { retryFailed, type TRPCRetryEvent } from '../retry-link.js';
import { aborted, deadlineRefusal, limitRefusal, refusal, trpcErrorType } from './errors.js';
import { inheritCall, outboundCriticality, withOutbound } from './propagation.js';
import { isAnswer } from './results.js';
import { inputAfterEvent } from './tracked-input.js';

/** @internal */
export type Envelope = OperationResultEnvelope<unknown, TRPCClientError<AnyRouter>>;
/** @internal */
export type Next = (op: Operation) => Observable<Envelope, TRPCClientError<AnyRouter>>;
/** A classifier of tRPC failures. */
export type TRPCClassify = (error: unknown, op: Operation) => ErrorVerdict;

/** A resilience stack, validated and built once per link. @internal */
export interface Stack {
  /** Deadline of the whole call in ms; `Infinity` for none. */
  readonly timeoutMs: number;
  /** Deadline of each attempt (derived per attempt unless `attemptTimeoutMs` was given). */
  readonly attemptTimeout: AttemptTimeout;
  readonly retry: AttemptEngine | undefined;
  readonly hedge: AttemptEngine | undefined;
  readonly onRetry: ((event: TRPCRetryEvent) => void) | undefined;
  readonly budget: RetryBudgetLike | undefined;
  readonly circuit: CircuitBreaker | undefined;
  readonly pool: Pool | undefined;
  /** `concurrency.adaptive`: one limit per procedure path, instead of the pool. */
  readonly limiters: AdaptiveLimiters | undefined;
  readonly rateLimit: TokenBucket | undefined;
  readonly classify: TRPCClassify;
  /** Inheritance from the inbound call (`propagate`); `undefined` when off. */
  readonly propagate: PropagatePlan | undefined;
  /** Whether an operation is safe to repeat (per-call `context.idempotent` already applied). */
  readonly idempotent: (op: Operation) => boolean;
  readonly clock: Clock;
  /** The `telemetry` option, guarded, and the procedure → target map; `undefined` without it. */
  readonly telemetry: SafeTelemetry | undefined;
  readonly targetOf: ((path: string) => TelemetryTarget) | undefined;
}

/**
 * Runs a deadline's work from inside the shared timer wheel: a throw (from an
 * observer above) is reported as uncaught, as a host timer's would be, and
 * cannot stop the wheel from expiring the other calls due at the same tick.
 */
function onDeadline(work: () => void): void {
  try {
    work();
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}

/**
 * One attempt: the observer of one subscription below the stack, and (as its
 * own entry on the shared timer wheel) its per-attempt deadline.
 * @internal
 */
export class Attempt extends WheelEntry implements Observer<Envelope, unknown> {
  sub: Unsubscribable | undefined = undefined;
  ended = false;
  /** The attempt's own deadline in ms, once armed. */
  timeoutMs = 0;
  /** Clock time the attempt started, read when attempts may have their own deadline. */
  startedAt = 0;

  constructor(
    readonly call: ResilientCall,
    /** 1 for the first attempt. */
    readonly index: number,
  ) {
    super();
  }

  next(envelope: Envelope): void {
    if (!this.ended) this.call.data(this, envelope);
  }

  error(error: unknown): void {
    if (this.ended) return;
    this.stop();
    this.call.tel?.attemptEnd(this.index, 'failure', trpcErrorType(error), this.call.telNow());
    this.call.attemptFailed(this, error);
  }

  complete(): void {
    if (this.ended) return;
    this.stop();
    this.call.completed(this);
  }

  /** The attempt's own deadline passed (the wheel calls this): it fails, and may be retried, like any failure. */
  expire(): void {
    if (!this.ended) onDeadline(() => this.timedOut());
  }

  private timedOut(): void {
    this.cancel();
    const tel = this.call.tel;
    if (tel !== undefined) {
      tel.deadlineExceeded('attempt');
      tel.attemptEnd(this.index, 'timeout', 'TIMEOUT', this.call.telNow());
    }
    this.call.attemptFailed(this, deadlineRefusal(this.call.op, this.timeoutMs, 'attempt timeout'));
  }

  /** Drops the attempt (a hedge that lost, or a call that ended). */
  cancel(): void {
    if (this.ended) return;
    const sub = this.sub;
    this.stop();
    sub?.unsubscribe();
  }

  private stop(): void {
    this.ended = true;
    this.sub = undefined;
    if (this.wheelSlot !== undefined) sharedTimerWheel.cancel(this);
  }
}

/** Marks, in `op.context`, a call a circuit above admitted as its half-open probe. */
const PROBE: unique symbol = Symbol('breakwater.circuitProbe');

type ProbeContext = Record<string | symbol, unknown> & { [PROBE]?: true };

/**
 * One call through a resilience stack, outermost first: bulkhead slot, rate
 * limit token, circuit permit (released once, with the call's final
 * outcome), the call's deadline, then attempts retried or hedged by the core
 * engine (see `retry-link.ts`, `hedge-link.ts`), each under its own deadline.
 * It is the teardown and (as its own entry on the
 * shared timer wheel, which arms no host timer per call) its deadline, so a
 * call that succeeds first time costs this object and one {@link Attempt}.
 * @internal
 */
export class ResilientCall extends WheelEntry implements Unsubscribable {
  done = false;
  /** Attempts started (reset when a resumed subscription delivers again). */
  started = 0;
  previousDelayMs = 0;
  deadlineAt = Number.POSITIVE_INFINITY;
  /** The whole call's deadline in ms, once armed. */
  ms = 0;
  repeatable = false;
  /** The latest attempt (the only one unless hedging). */
  current: Attempt | undefined = undefined;
  /** Attempts running while hedging; `undefined` otherwise. */
  running: Attempt[] | undefined = undefined;
  /** Cancels a backoff wait, a hedge timer or a bulkhead queue wait. */
  waiting: AbortController | undefined = undefined;
  private answered = false;
  /** The pool a slot was taken from at once, or the resolver of a queued slot task. */
  private slotOf: Pool | undefined = undefined;
  private giveBack: (() => void) | undefined = undefined;
  /** The call's slot under its procedure's adaptive limit, and what the call's end tells that limit. */
  private limit: LimitPermit | undefined = undefined;
  private limitOutcome: LimitOutcome = 'ignored';
  private permit = -1;
  /**
   * A half-open probe: of this stack's circuit, or of a circuit in a link
   * above (the mark in `op.context`). It gets one attempt, never retried or hedged.
   */
  private probe = false;
  /** The operation sent below: `op`, or a copy whose context carries the probe mark. */
  private below: Operation | undefined = undefined;
  private startedAt = 0;
  /**
   * The signal attempts carry below in place of the caller's: it aborts with it, so links below
   * that listen per operation (tRPC's `httpBatchLink`) leave a signal many calls share alone.
   */
  private belowSignal: AbortController | undefined = undefined;
  /** Stops waiting on the caller's signal; `undefined` while not listening. */
  private stopListening: (() => void) | undefined = undefined;
  private lastEventId: string | undefined = undefined;
  /** The call's telemetry (the stack's `telemetry` option), else `undefined`. */
  tel: SafeCallTelemetry | undefined = undefined;
  /** The call waited for a bulkhead slot: its attempt 1 does not start with the call. */
  private queued = false;
  /** Waiting in the bulkhead's queue now: an end there was never sent, so it is neutral for the circuit. */
  private inQueue = false;
  /** Bit `i` set: attempt `i` was a hedge. */
  private hedges = 0;

  constructor(
    readonly stack: Stack,
    readonly op: Operation,
    private readonly nextLink: Next,
    private readonly observer: Partial<Observer<Envelope, unknown>>,
  ) {
    super();
  }

  start(): void {
    const { stack, op } = this;
    // A misspelt per-call key would be ignored in silence: the call is refused before it takes anything.
    const fault = contextFault(op.context);
    if (fault !== undefined) {
      this.fail(refusal(fault));
      return;
    }
    const telemetry = stack.telemetry;
    if (telemetry !== undefined) {
      this.tel = telemetry.startCall(
        (stack.targetOf as (path: string) => TelemetryTarget)(op.path),
        telemetry.clock(),
      );
    }
    if (op.signal?.aborted) {
      this.fail(aborted(op.signal));
      return;
    }
    const subscription = op.type === 'subscription';
    // The deadline starts first: a wait for a slot counts against it.
    const now = this.startDeadline(subscription);
    // A subscription holding a slot for its whole life would starve the calls.
    const limiter = subscription ? undefined : stack.limiters?.limiterFor(op.path);
    const admission = admitCall(
      {
        breaker: stack.circuit,
        bucket: stack.rateLimit,
        limiter,
        pool: subscription ? undefined : stack.pool,
      },
      limiter === undefined
        ? undefined
        : criticalityOf(
            'context.criticality',
            (op.context as BreakwaterOperationContext).criticality,
          ),
    );
    if (!admission.admitted) {
      const error =
        admission.error ??
        new CircuitOpenError({ retryAfterMs: (stack.circuit as CircuitBreaker).retryAfterMs() });
      this.refuse(error);
      this.fail(
        admission.reason === 'concurrency-limit' ? limitRefusal(admission.error) : refusal(error),
      );
      return;
    }
    this.permit = admission.permit;
    if (this.permit >= 0) this.startedAt = now ?? stack.clock();
    this.limit = admission.limit;
    if (admission.slot === 'queue') {
      this.queue(stack.pool as Pool);
      return;
    }
    if (admission.slot === 'taken') this.slotOf = stack.pool;
    this.admitted();
  }

  /** Arms the call's deadline (none for a subscription); returns the clock reading it took, if any. */
  private startDeadline(subscription: boolean): number | undefined {
    if (subscription) return undefined;
    const { stack, op } = this;
    const ms = (op.context as BreakwaterOperationContext).timeoutMs ?? stack.timeoutMs;
    if (ms === Number.POSITIVE_INFINITY) return undefined;
    const now = stack.clock();
    this.ms = ms;
    this.deadlineAt = now + ms;
    // A per-call `context.timeoutMs` of 0, below or NaN expires at the wheel's next tick.
    // biome-ignore lint/complexity/useMathMinMax: Math.max keeps NaN, which the wheel refuses.
    sharedTimerWheel.schedule(this, ms > 0 ? ms : 0);
    this.listen();
    return now;
  }

  /** Waits for a bulkhead slot (within the call's deadline), or is refused when the queue is full. */
  private queue(pool: Pool): void {
    this.queued = true;
    this.inQueue = true;
    const waiting = new AbortController();
    this.waiting = waiting;
    this.listen();
    const task = (signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        this.waiting = undefined;
        this.inQueue = false;
        if (this.done || signal.aborted) return resolve();
        this.giveBack = resolve;
        this.admitted();
      });
    pool.run(task, { signal: waiting.signal }).catch((error: unknown) => {
      if (this.waiting === waiting) this.waiting = undefined;
      // Ended already (its deadline passed, or its caller left): the wait was dropped with it.
      if (this.done) return;
      this.refuse(error);
      this.fail(refusal(error as Error));
    });
  }

  /** Admitted, with its slot: runs the attempts. */
  private admitted(): void {
    const { stack, op } = this;
    this.probe = isProbePermit(this.permit) || (op.context as ProbeContext)[PROBE] === true;
    if (this.probe) {
      // Links below (a retryLink under this circuit) must not repeat the probe either.
      const context: ProbeContext = Object.assign({}, op.context);
      context[PROBE] = true;
      this.below = Object.assign({}, op, { context });
    }
    const subscription = op.type === 'subscription';
    stack.budget?.recordRequest();
    this.repeatable = stack.idempotent(op);
    if (stack.hedge !== undefined && this.repeatable && !subscription && !this.probe) {
      this.running = [];
    }
    this.launch();
  }

  /** The call's deadline passed (the wheel calls this). */
  expire(): void {
    if (this.done) return;
    onDeadline(() => {
      this.tel?.deadlineExceeded('call');
      this.fail(deadlineRefusal(this.op, this.ms, 'timeout'));
    });
  }

  /** A reading of the stack's telemetry clock (only called when the stack has telemetry). */
  telNow(): number {
    return (this.stack.telemetry as SafeTelemetry).clock();
  }

  /** Telemetry of a call refused before its first attempt (`cause`: the Breakwater error). */
  private refuse(cause: unknown): void {
    const tel = this.tel;
    const reason = refusalOf(cause);
    if (tel === undefined || reason === undefined) return;
    // Told here, so `fail` does not end it again as a failure.
    this.tel = undefined;
    tel.refused(reason);
    tel.end('refused', 0, undefined, this.telNow());
  }

  /** Starts the next attempt (`asHedge`: while the others still run). */
  launch(asHedge = false): void {
    if (this.done) return;
    const { stack, op } = this;
    const n = ++this.started;
    const tel = this.tel;
    if (tel !== undefined) {
      // Attempt 1 with no wait before it started with the call, for a telemetry that says so.
      if (n !== 1 || this.queued || !(stack.telemetry as SafeTelemetry).firstAttemptAtStart) {
        tel.attemptStart(n, this.telNow());
      }
      if (asHedge) {
        this.hedges |= 1 << n;
        tel.hedge(n);
      }
    }
    const attempt = new Attempt(this, n);
    this.current = attempt;
    this.running?.push(attempt);
    const timeout = stack.attemptTimeout;
    if (op.type !== 'subscription' && timeout.mayCut) {
      const now = stack.clock();
      attempt.startedAt = now;
      const left = this.deadlineAt - now;
      const ms = timeout.forAttempt(op.path, left, this.retryMayFollow(n), now);
      // An attempt deadline at or after the call's would never fire first.
      if (ms < left) {
        attempt.timeoutMs = ms;
        sharedTimerWheel.schedule(attempt, ms);
      }
    }
    // Attempt 1 starts with the call (after any queueing): its time left is taken as the call's.
    const left =
      this.deadlineAt === Number.POSITIVE_INFINITY
        ? Number.POSITIVE_INFINITY
        : n === 1 && !this.queued
          ? this.ms
          : this.deadlineAt - stack.clock();
    const sent = withOutbound(this.below ?? op, {
      deadline: systemClock() + Math.min(left, attempt.timeoutMs > 0 ? attempt.timeoutMs : left),
      attempt: n,
      criticality: outboundCriticality(op),
    });
    if (op.signal) {
      this.belowSignal ??= new AbortController();
      this.listen();
      sent.signal = this.belowSignal.signal;
    }
    const input =
      this.lastEventId === undefined
        ? sent
        : Object.assign({}, sent, { input: inputAfterEvent(op.input, this.lastEventId) });
    const sub = this.nextLink(input).subscribe(attempt);
    // An attempt that ended during subscribe has been handled already.
    if (attempt.ended) sub.unsubscribe();
    else attempt.sub = sub;
    if (this.running !== undefined && !this.done) hedgeTimer(this);
  }

  data(attempt: Attempt, envelope: Envelope): void {
    if (this.done) return;
    if (this.running !== undefined) {
      // The first answer wins: the other attempts and the hedge timer go.
      for (const other of this.running) if (other !== attempt) other.cancel();
      this.running = undefined;
      this.stopWaiting();
    }
    if (!this.answered && isAnswer(envelope)) {
      this.answered = true;
      this.limitOutcome = 'answered';
      if (this.op.type !== 'subscription' && this.stack.attemptTimeout.derived) {
        // A derived attempt timeout follows the procedure's successful attempts.
        const now = this.stack.clock();
        this.stack.attemptTimeout.observe(this.op.path, now - attempt.startedAt, now);
      }
      const tel = this.tel;
      if (tel !== undefined) {
        tel.attemptEnd(attempt.index, 'success', undefined, this.telNow());
        if ((this.hedges & (1 << attempt.index)) !== 0) tel.hedgeWon(attempt.index);
      }
      this.release('success');
    }
    const result = envelope.result as { type?: string; id?: string };
    if (this.op.type === 'subscription' && result.id && (!result.type || result.type === 'data')) {
      this.lastEventId = result.id;
      // A resumed stream that delivers again has recovered: its retries start over.
      this.started = 1;
      this.previousDelayMs = 0;
    }
    this.observer.next?.(envelope);
  }

  attemptFailed(attempt: Attempt, error: unknown): void {
    if (this.done) return;
    // A query that already answered has nothing left to repeat; a half-open probe is never
    // repeated (its failure re-opens the circuit, and the caller gets it).
    if ((this.answered && this.op.type !== 'subscription') || (this.probe && !this.answered)) {
      this.fail(error);
      return;
    }
    if (this.running !== undefined) {
      hedgeFailed(this, attempt, error);
      return;
    }
    retryFailed(this, error);
  }

  completed(attempt: Attempt): void {
    if (this.done || (this.running !== undefined && this.current !== attempt)) return;
    this.done = true;
    this.release('success');
    this.settle();
    this.tel?.end('success', this.started, undefined, this.telNow());
    this.observer.complete?.();
  }

  /** Whether a retry or hedge may follow attempt `n` should it time out: a probe is never repeated. */
  private retryMayFollow(n: number): boolean {
    const engine = this.running === undefined ? this.stack.retry : this.stack.hedge;
    return engine !== undefined && this.repeatable && !this.probe && n < engine.attempts;
  }

  /** The verdict an attempt's failure gets: only a never-sent request is repeated unless idempotent. */
  judge(error: unknown): ErrorVerdict {
    const verdict = this.stack.classify(error, this.op);
    if (this.op.type === 'subscription' && verdict.retry === false) {
      // A stream that died without a server error is a transport failure: resume it.
      const transport = (error as TRPCClientError<AnyRouter>).shape == null;
      if (transport && verdict.countForCircuit !== false) return RESUME;
    }
    return this.repeatable || verdict.neverSent === true ? verdict : NOT_REPEATABLE;
  }

  /** Runs the next attempt after `ms` on the engine's timer, unless the call ends first. */
  waitThenLaunch(engine: AttemptEngine, ms: number): void {
    this.stopWaiting();
    const waiting = new AbortController();
    this.waiting = waiting;
    // Without a deadline nobody listens to the caller's signal yet: the wait must end on abort.
    this.listen();
    engine.schedule(ms, () => this.launch(), waiting.signal);
  }

  stopWaiting(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.abort();
  }

  /** Ends the call with `error`, dropping what runs below. */
  fail(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.dropBelow();
    if (this.limit !== undefined) this.limitOutcome = trpcLimitOutcome(error, this.op.signal);
    if (this.permit >= 0) {
      const verdict = this.stack.classify(error, this.op);
      // A probe that never reached a server (connection refused) says nothing about it:
      // neutral, so the next call probes as soon as the server listens again.
      const neutral =
        this.inQueue ||
        verdict.countForCircuit === false ||
        (verdict.neverSent === true && isProbePermit(this.permit));
      this.release(neutral ? 'neutral' : 'failure');
    }
    this.settle();
    this.tel?.end(
      this.op.signal?.aborted ? 'cancelled' : 'failure',
      this.started,
      trpcErrorType(error),
      this.telNow(),
    );
    this.observer.error?.(error);
  }

  /** The caller's `op.signal` aborted. */
  private cancel(): void {
    const signal = this.op.signal as AbortSignal;
    this.fail(aborted(signal));
    this.belowSignal?.abort(signal.reason);
  }

  /** Teardown from above (also called by tRPC after the call settled). */
  unsubscribe(): void {
    if (this.done) return;
    this.done = true;
    this.dropBelow();
    // The caller left: that says nothing about the server.
    this.release('neutral');
    this.settle();
    this.tel?.end(this.answered ? 'success' : 'cancelled', this.started, undefined, this.telNow());
  }

  private dropBelow(): void {
    this.stopWaiting();
    if (this.running !== undefined) for (const a of this.running) a.cancel();
    this.current?.cancel();
  }

  /** Gives the circuit its one outcome for the call. */
  private release(outcome: CallOutcome): void {
    const circuit = this.stack.circuit;
    if (circuit === undefined || this.permit < 0) return;
    const permit = this.permit;
    this.permit = -1;
    circuit.release(permit, { outcome, durationMs: this.stack.clock() - this.startedAt });
  }

  /** Gives back the timer, the abort listener and the bulkhead slot, once. */
  private settle(): void {
    if (this.wheelSlot !== undefined) sharedTimerWheel.cancel(this);
    this.stopListening?.();
    this.stopListening = undefined;
    const slotOf = this.slotOf;
    const giveBack = this.giveBack;
    const limit = this.limit;
    this.slotOf = undefined;
    this.giveBack = undefined;
    this.limit = undefined;
    slotOf?.give(true);
    giveBack?.();
    limit?.release(this.limitOutcome);
  }

  private listen(): void {
    const signal = this.op.signal;
    if (this.stopListening !== undefined || !signal) return;
    // One listener on a signal many calls share: Node warns past ten.
    this.stopListening = onAbort(signal, () => this.cancel());
  }
}

/**
 * What a failed call tells its procedure's adaptive limit: a deadline that
 * passed, or the server's `TOO_MANY_REQUESTS`, is a drop; a call its caller
 * cancelled, or that got no answer (a transport failure: no latency to
 * read), tells nothing; any other server error is an answer, whose latency
 * is a sample.
 */
function trpcLimitOutcome(error: unknown, signal: AbortSignal | null | undefined): LimitOutcome {
  if (signal?.aborted) return 'ignored';
  const e = error as { cause?: unknown; data?: { code?: unknown } | null; shape?: unknown };
  if (isDeadlineExceededError(e.cause)) return 'dropped';
  if (e.shape == null) return 'ignored';
  return e.data?.code === 'TOO_MANY_REQUESTS' ? 'dropped' : 'answered';
}

const NOT_REPEATABLE: ErrorVerdict = Object.freeze({ retry: false });
const RESUME: ErrorVerdict = Object.freeze({ retry: true });

/**
 * The observable a stack returns for a call: each subscription runs one
 * {@link ResilientCall}, so a call costs this object and its call, not
 * `observable()`'s closures. Like tRPC's observables it is cold and ends once.
 */
class CallObservable {
  constructor(
    private readonly stack: Stack,
    private readonly op: Operation,
    private readonly nextLink: Next,
  ) {}

  subscribe(observer: Partial<Observer<Envelope, unknown>>): Unsubscribable {
    const { stack } = this;
    const inherited = inheritCall(
      stack.propagate,
      stack.timeoutMs,
      stack.classify,
      this.op,
      observer,
    );
    if (inherited?.expired) {
      // The inbound deadline has passed: nothing is sent.
      inherited.observer.error?.(deadlineRefusal(inherited.op, 0, 'timeout'));
      return { unsubscribe() {} };
    }
    const call = new ResilientCall(
      stack,
      inherited?.op ?? this.op,
      this.nextLink,
      inherited?.observer ?? observer,
    );
    call.start();
    return call;
  }

  pipe(...operations: ((source: unknown) => unknown)[]): unknown {
    let result: unknown = this;
    for (const operation of operations) result = operation(result);
    return result;
  }
}

/** The link running every call through the stack of its procedure path. @internal */
export function stackLink<TRouter extends AnyRouter>(
  stackFor: (path: string) => Stack,
): TRPCLink<TRouter> {
  return () =>
    ({ op, next }) =>
      new CallObservable(stackFor(op.path), op, next as Next) as unknown as ReturnType<typeof next>;
}
