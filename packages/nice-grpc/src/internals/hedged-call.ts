import {
  type AttemptEngine,
  stopRefusal,
  type TelemetryScope,
  telemetryScopeOf,
} from '@breakwater/core/internal';
import type { CallOptions } from 'nice-grpc-common';
import { Attempt } from './attempt.js';
import { type DeadlineOption, deadlineAt } from './deadline.js';
import { abortErrorFor } from './errors.js';
import { type UnaryNext, unaryResult } from './next.js';
import { type ChainSettings, judgeAttempt } from './retry-chain.js';
import { telemetryErrorType } from './telemetry.js';

/**
 * One hedged unary call: the engine starts another attempt whenever the
 * latest has been outstanding for its delay (or at once after a retryable
 * failure); the first answer wins and the others are cancelled. Each attempt
 * has its own signal, so a loser can be cancelled alone; the caller's signal
 * cancels them all.
 * @internal
 */
export class HedgedCall<Response> {
  private readonly live = new Map<Attempt, AbortController>();
  private readonly timers = new AbortController();
  private readonly deadline: number;
  private started = 0;
  private settled = false;
  /** The call's telemetry (the middleware's `telemetry` option), else `undefined`. */
  private readonly scope: TelemetryScope | undefined;
  /** Bit `i` set: attempt `i` was a hedge. */
  private hedges = 0;
  private resolve!: (value: Response) => void;
  private reject!: (error: unknown) => void;

  constructor(
    private readonly s: ChainSettings,
    private readonly engine: AttemptEngine,
    private readonly path: string,
    private readonly options: CallOptions,
    private readonly next: UnaryNext<Response>,
    private readonly request: unknown,
  ) {
    this.deadline = deadlineAt((options as DeadlineOption).deadline, s.clock);
    const scope = telemetryScopeOf(options);
    this.scope = scope;
    if (scope !== undefined) scope.driven = true;
  }

  run(): Promise<Response> {
    const promise = new Promise<Response>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const signal = this.options.signal;
    if (signal?.aborted) {
      this.finish(abortErrorFor(signal), false);
      return promise;
    }
    this.engine.budget?.recordRequest();
    signal?.addEventListener('abort', this);
    this.launch();
    return promise;
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.finish(abortErrorFor(this.options.signal as AbortSignal), false);
  }

  private launch(asHedge = false): void {
    const index = ++this.started;
    const scope = this.scope;
    if (scope !== undefined) {
      scope.attempts = index;
      scope.tel.attemptStart(index);
      if (asHedge) {
        this.hedges |= 1 << index;
        scope.tel.hedge(index);
      }
    }
    const controller = new AbortController();
    const left = this.deadline - this.s.clock();
    const attempt = new Attempt(this.options, index, left, controller.signal);
    this.live.set(attempt, controller);
    unaryResult(this.next(this.request, attempt.options)).then(
      (response) => {
        if (this.settled) return;
        attempt.commit();
        if (scope !== undefined) {
          scope.tel.attemptEnd(index, 'success', undefined);
          if ((this.hedges & (1 << index)) !== 0) scope.tel.hedgeWon(index);
        }
        this.finish(response, true);
      },
      (error: unknown) => this.failed(attempt, error),
    );
    const { engine } = this;
    if (index < engine.attempts) {
      engine.schedule(engine.hedgeDelayMs ?? 0, () => this.hedge(index), this.timers.signal);
    }
  }

  /** The hedge timer armed when attempt `index` started fired. */
  private hedge(index: number): void {
    if (this.settled || this.started !== index) return;
    if (this.engine.mayHedge(index, this.deadline)) this.launch(true);
    else if (this.s.clock() < this.deadline) this.scope?.tel.refused('budget-exhausted');
  }

  private failed(attempt: Attempt, error: unknown): void {
    const controller = this.live.get(attempt);
    this.live.delete(attempt);
    // A loser we cancelled, or a call already decided: nothing to learn.
    if (this.settled || controller?.signal.aborted) return;
    const type = this.scope === undefined ? '' : telemetryErrorType(error);
    this.scope?.tel.attemptEnd(attempt.index, 'failure', type);
    const verdict = judgeAttempt(this.s, this.path, attempt, error, this.deadline, true);
    // Another attempt may still answer; only a failure not worth repeating ends the call now.
    if (verdict.retry !== false && this.live.size > 0) return;
    const delay = this.engine.afterFailure(this.started, 0, verdict, error, this.deadline);
    if (delay < 0) {
      const refused = this.scope === undefined ? undefined : stopRefusal(delay);
      if (refused !== undefined) this.scope?.tel.refused(refused);
      attempt.commit();
      this.finish(error, false);
      return;
    }
    const index = this.started;
    this.scope?.tel.retry(index, delay, type);
    this.engine.schedule(
      delay,
      () => {
        if (!this.settled && this.started === index) this.launch();
      },
      this.timers.signal,
    );
  }

  private finish(outcome: unknown, ok: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.timers.abort();
    this.options.signal?.removeEventListener('abort', this);
    for (const controller of this.live.values()) controller.abort();
    this.live.clear();
    if (ok) this.resolve(outcome as Response);
    else this.reject(outcome);
  }
}
