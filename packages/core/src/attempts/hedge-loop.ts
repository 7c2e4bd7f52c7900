import { abortError } from '../internal/abort.js';
import { onAbort } from '../internal/on-abort.js';
import { newPromiseInto, noSettler } from '../internal/settle.js';
import type { ErrorVerdict } from '../retry/verdict.js';
import type { AttemptEngine } from './engine.js';
import { errorTypeOf, stopRefusal, type TelemetryScope } from './telemetry.js';

/** How the promise-style hedging driver starts and judges the attempts of one call. @internal */
export interface HedgeHooks<T> {
  /** Starts attempt `index` (1 = the first); `signal` aborts when it loses or the call ends. */
  start(index: number, signal: AbortSignal): PromiseLike<T>;
  /** Judges attempt `index`'s failure. */
  judge(error: unknown, index: number): ErrorVerdict;
  /** Attempt `index`'s outcome is the call's: its answer won, or its failure ends the call. */
  chosen?(index: number): void;
  /** The error the call rejects with when the caller's `signal` aborts. Defaults to `abortError(signal)`. */
  cancelled?(signal: AbortSignal): unknown;
  /** The call's telemetry: the run reports each attempt, hedge, replacement and stop to it. Defaults to none. */
  telemetry?: TelemetryScope | undefined;
  /** The bounded name of an attempt's error for telemetry. Defaults to the error's `name`. */
  errorType?(error: unknown): string;
}

/**
 * The promise-style hedging driver of an {@link AttemptEngine} with a
 * `hedgeDelayMs`: starts attempt 1, and another whenever the latest has been
 * outstanding for the delay (within `attempts`, the deadline and the budget,
 * by `engine.mayHedge`); the first answer wins and every other attempt's
 * signal aborts. A failure ends the call only when it is not retryable or no
 * other attempt is running; otherwise the engine decides on a replacement
 * (pushback only, never backoff). The caller's `signal` cancels everything.
 * The budget gets its deposit once, at the start.
 * @internal
 */
export function runHedged<T>(
  engine: AttemptEngine,
  hooks: HedgeHooks<T>,
  signal: AbortSignal | undefined,
  deadlineAt: number,
): Promise<T> {
  return new HedgedRun(engine, hooks, signal, deadlineAt).run();
}

class HedgedRun<T> {
  /** The signal of each attempt still running, by index. */
  private readonly live = new Map<number, AbortController>();
  /** Cancels the pending hedge or replacement timer once the call is decided. */
  private readonly timers = new AbortController();
  private started = 0;
  private settled = false;
  /** Stops waiting on the caller's signal. */
  private stopListening: (() => void) | undefined = undefined;
  /** Bit `i` set: attempt `i` was a hedge (for telemetry's hedges won). */
  private hedges = 0;
  resolve: (value: T | PromiseLike<T>) => void = noSettler;
  reject: (error: unknown) => void = noSettler;

  constructor(
    private readonly engine: AttemptEngine,
    private readonly hooks: HedgeHooks<T>,
    private readonly signal: AbortSignal | undefined,
    private readonly deadlineAt: number,
  ) {}

  run(): Promise<T> {
    const promise = newPromiseInto<T>(this);
    const signal = this.signal;
    if (signal?.aborted) {
      this.cancel();
      return promise;
    }
    this.engine.budget?.recordRequest();
    if (signal !== undefined) this.stopListening = onAbort(signal, () => this.cancel());
    this.launch();
    return promise;
  }

  /** The caller's signal aborted. */
  private cancel(): void {
    const signal = this.signal as AbortSignal;
    this.finish(this.hooks.cancelled?.(signal) ?? abortError(signal), false);
  }

  private launch(asHedge = false): void {
    const index = ++this.started;
    const scope = this.hooks.telemetry;
    if (scope !== undefined) {
      scope.attempts = index;
      scope.tel.attemptStart(index, scope.clock());
      if (asHedge) {
        this.hedges |= 1 << index;
        scope.tel.hedge(index);
      }
    }
    const controller = new AbortController();
    this.live.set(index, controller);
    let result: PromiseLike<T>;
    try {
      result = this.hooks.start(index, controller.signal);
    } catch (error) {
      result = Promise.reject(error);
    }
    Promise.resolve(result).then(
      (value) => {
        if (this.settled) return;
        if (scope !== undefined) {
          scope.tel.attemptEnd(index, 'success', undefined, scope.clock());
          if ((this.hedges & (1 << index)) !== 0) scope.tel.hedgeWon(index);
        }
        this.hooks.chosen?.(index);
        this.finish(value, true);
      },
      (error: unknown) => this.failed(index, error),
    );
    const engine = this.engine;
    if (index < engine.attempts) {
      engine.schedule(engine.hedgeDelayMs ?? 0, () => this.hedge(index), this.timers.signal);
    }
  }

  /** The hedge timer armed when attempt `index` started fired. */
  private hedge(index: number): void {
    if (this.settled || this.started !== index) return;
    if (this.engine.mayHedge(index, this.deadlineAt)) this.launch(true);
    // Within the attempts and before the deadline: the budget refused it.
    else if (this.engine.clock() < this.deadlineAt)
      this.hooks.telemetry?.tel.refused('budget-exhausted');
  }

  private failed(index: number, error: unknown): void {
    const controller = this.live.get(index);
    this.live.delete(index);
    // A loser we cancelled, or a call already decided: nothing to learn.
    if (this.settled || controller?.signal.aborted) return;
    const scope = this.hooks.telemetry;
    const type = scope === undefined ? '' : (this.hooks.errorType ?? errorTypeOf)(error);
    scope?.tel.attemptEnd(index, 'failure', type, scope.clock());
    const verdict = this.hooks.judge(error, index);
    // Another attempt may still answer; only a failure not worth repeating ends the call now.
    if (verdict.retry !== false && this.live.size > 0) return;
    const delay = this.engine.afterFailure(this.started, 0, verdict, error, this.deadlineAt);
    if (delay < 0) {
      const refused = scope === undefined ? undefined : stopRefusal(delay);
      if (refused !== undefined) scope?.tel.refused(refused);
      this.hooks.chosen?.(index);
      this.finish(error, false);
      return;
    }
    const started = this.started;
    scope?.tel.retry(started, delay, type);
    this.engine.schedule(
      delay,
      () => {
        if (!this.settled && this.started === started) this.launch();
      },
      this.timers.signal,
    );
  }

  private finish(outcome: unknown, ok: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.timers.abort();
    this.stopListening?.();
    for (const controller of this.live.values()) controller.abort();
    this.live.clear();
    if (ok) this.resolve(outcome as T);
    else this.reject(outcome);
  }
}
