import type { Clock, RetryBudget, Sleep } from '@breakwater/core';
import type { GrpcRetryEvent, GrpcStatusClassifier } from '@breakwater/core/grpc';
import type { CallOptions } from 'nice-grpc-common';
import { Attempt } from './attempt.js';
import { type DeadlineOption, deadlineAt } from './deadline.js';
import { abortErrorFor, failureStatus } from './errors.js';
import { type UnaryNext, unaryResult } from './next.js';

/** Settings shared by every call of one hedging middleware. @internal */
export interface HedgeSettings {
  delayMs: number;
  maxAttempts: number;
  budget: RetryBudget | undefined;
  classify: GrpcStatusClassifier;
  onHedge: ((event: GrpcRetryEvent) => void) | undefined;
  clock: Clock;
  sleep: Sleep;
}

/**
 * One hedged unary call: attempts start `delayMs` apart (or at once after a
 * retryable failure) until one answers; the first answer wins and the
 * others are cancelled. Each attempt has its own signal, so a loser can be
 * cancelled alone; the caller's signal cancels them all.
 * @internal
 */
export class HedgedCall<Response> {
  private readonly live = new Map<Attempt, AbortController>();
  private readonly timer = new AbortController();
  private readonly deadlineAt: number;
  private started = 0;
  private settled = false;
  private resolve!: (value: Response) => void;
  private reject!: (error: unknown) => void;

  constructor(
    private readonly settings: HedgeSettings,
    private readonly path: string,
    private readonly options: CallOptions,
    private readonly next: UnaryNext<Response>,
    private readonly request: unknown,
  ) {
    this.deadlineAt = deadlineAt((options as DeadlineOption).deadline, settings.clock);
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
    signal?.addEventListener('abort', this);
    this.launch();
    return promise;
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.finish(abortErrorFor(this.options.signal as AbortSignal), false);
  }

  private launch(): void {
    const index = ++this.started;
    const controller = new AbortController();
    const attempt = new Attempt(
      this.options,
      index,
      this.deadlineAt - this.settings.clock(),
      controller.signal,
    );
    this.live.set(attempt, controller);
    unaryResult(this.next(this.request, attempt.options)).then(
      (response) => {
        if (this.settled) return;
        attempt.commit();
        this.finish(response, true);
      },
      (error: unknown) => this.failed(attempt, error),
    );
    if (index < this.settings.maxAttempts) this.armHedge();
  }

  private armHedge(): void {
    const { settings } = this;
    const index = this.started;
    void settings.sleep(settings.delayMs, this.timer.signal).then(() => {
      if (this.settled || this.started !== index || this.timer.signal.aborted) return;
      if (settings.budget !== undefined && !settings.budget.tryRetry()) return;
      settings.onHedge?.({
        path: this.path,
        attempt: index + 1,
        delayMs: settings.delayMs,
        code: undefined,
      });
      this.launch();
    });
  }

  private failed(attempt: Attempt, error: unknown): void {
    const controller = this.live.get(attempt);
    this.live.delete(attempt);
    // A loser we cancelled, or a call already decided: nothing to learn.
    if (this.settled || controller?.signal.aborted) return;
    const status = failureStatus(error, attempt.options.signal);
    const verdict =
      status === undefined
        ? undefined
        : this.settings.classify({
            path: this.path,
            code: status.code,
            details: status.details,
            trailer: attempt.trailerValue(),
          });
    if (verdict === undefined || !verdict.retry) {
      attempt.commit();
      this.finish(error, false);
      return;
    }
    // Another attempt may still answer; the call fails only when none is left.
    if (this.live.size > 0) return;
    const { settings } = this;
    const waitMs = verdict.retryAfterMs ?? 0;
    if (
      this.started >= settings.maxAttempts ||
      settings.clock() + waitMs >= this.deadlineAt ||
      (settings.budget !== undefined && !settings.budget.tryRetry())
    ) {
      attempt.commit();
      this.finish(error, false);
      return;
    }
    settings.onHedge?.({
      path: this.path,
      attempt: this.started + 1,
      delayMs: waitMs,
      code: status?.code,
    });
    if (waitMs <= 0) {
      this.launch();
      return;
    }
    const index = this.started;
    void settings.sleep(waitMs, this.timer.signal).then(() => {
      if (!this.settled && this.started === index && !this.timer.signal.aborted) this.launch();
    });
  }

  private finish(outcome: unknown, ok: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.timer.abort();
    this.options.signal?.removeEventListener('abort', this);
    for (const controller of this.live.values()) controller.abort();
    this.live.clear();
    if (ok) this.resolve(outcome as Response);
    else this.reject(outcome);
  }
}
