import {
  type Backoff,
  type Clock,
  isDeadlineExceededError,
  type RetryBudget,
  type Sleep,
  type TimeoutOptions,
  withTimeout,
} from '@breakwater/core';
import type { GrpcRetryEvent, GrpcStatusClassifier } from '@breakwater/core/grpc';
import { type CallOptions, Status } from 'nice-grpc-common';
import { Attempt } from './attempt.js';
import { type DeadlineOption, deadlineAt } from './deadline.js';
import { abortErrorFor, failureStatus, isAbortError, refusal } from './errors.js';
import { type StreamNext, type UnaryNext, unaryResult } from './next.js';

/** Settings shared by every call of one retry middleware. @internal */
export interface RetrySettings {
  backoff: Backoff;
  budget: RetryBudget | undefined;
  classify: GrpcStatusClassifier;
  perAttemptTimeoutMs: number | undefined;
  clock: Clock;
  sleep: Sleep;
}

/**
 * The attempts of one call, in sequence. Each attempt gets the time left
 * before the call's deadline as `grpc-timeout` (less under a per-attempt
 * timeout) and `grpc-previous-rpc-attempts` from the second on.
 * @internal
 */
export class RetryChain {
  private lastDelayMs = 0;
  private readonly deadlineAt: number;

  constructor(
    private readonly settings: RetrySettings,
    private readonly path: string,
    private readonly options: CallOptions,
    private readonly maxAttempts: number,
    private readonly onRetry: ((event: GrpcRetryEvent) => void) | undefined,
  ) {
    this.deadlineAt = deadlineAt((options as DeadlineOption).deadline, settings.clock);
  }

  async unary<Response>(next: UnaryNext<Response>, request: unknown): Promise<Response> {
    const perAttemptMs = this.settings.perAttemptTimeoutMs;
    for (let index = 1; ; index++) {
      const left = this.deadlineAt - this.settings.clock();
      let attempt: Attempt | undefined;
      try {
        let response: Response;
        if (perAttemptMs === undefined || perAttemptMs >= left) {
          attempt = new Attempt(this.options, index, left, undefined);
          // A unary next() never yields: its first step is the response.
          response = (await next(request, attempt.options).next()).value as Response;
        } else {
          response = await withTimeout((signal) => {
            attempt = new Attempt(this.options, index, perAttemptMs, signal);
            return unaryResult(next(request, attempt.options));
          }, this.timeoutOptions(perAttemptMs));
        }
        (attempt as Attempt).commit();
        return response;
      } catch (error) {
        await this.afterFailure(
          error,
          attempt ?? new Attempt(this.options, index, left, undefined),
        );
      }
    }
  }

  async *stream<Response>(next: StreamNext<Response>, request: unknown): AsyncGenerator<Response> {
    for (let index = 1; ; index++) {
      const attempt = new Attempt(
        this.options,
        index,
        this.deadlineAt - this.settings.clock(),
        undefined,
      );
      const messages = next(request, attempt.options);
      let first: IteratorResult<Response, void>;
      try {
        first = await messages.next();
      } catch (error) {
        await this.afterFailure(error, attempt);
        continue;
      }
      // A delivered message cannot be taken back: from here on the stream is not retried.
      attempt.commit();
      if (first.done) return;
      let delegated = false;
      try {
        yield first.value;
        delegated = true;
        yield* messages;
      } finally {
        if (!delegated) await messages.return(undefined);
      }
      return;
    }
  }

  private timeoutOptions(timeoutMs: number): TimeoutOptions {
    const signal = this.options.signal;
    return signal === undefined
      ? { timeoutMs, sleep: this.settings.sleep }
      : { timeoutMs, signal, sleep: this.settings.sleep };
  }

  /** Returns when the call should try again (after its backoff), throws the call's final error otherwise. */
  private async afterFailure(error: unknown, attempt: Attempt): Promise<void> {
    const { settings } = this;
    const signal = this.options.signal;
    if (signal?.aborted) {
      attempt.commit();
      throw isAbortError(error) ? error : abortErrorFor(signal);
    }
    // withTimeout rejects with DeadlineExceededError only when this attempt's own timeout passed.
    const perAttempt = isDeadlineExceededError(error);
    const finalError = perAttempt
      ? refusal(this.path, Status.DEADLINE_EXCEEDED, error as Error)
      : error;
    const status = perAttempt
      ? { code: Status.DEADLINE_EXCEEDED, details: (error as Error).message }
      : failureStatus(error, signal);
    if (status === undefined) {
      attempt.commit();
      throw error;
    }
    const verdict = settings.classify({
      path: this.path,
      code: status.code,
      details: status.details,
      trailer: attempt.trailerValue(),
      perAttemptDeadline: perAttempt && settings.clock() < this.deadlineAt,
    });
    const delayMs = verdict.retry
      ? (verdict.retryAfterMs ?? settings.backoff.delayFor(attempt.index, this.lastDelayMs))
      : 0;
    if (
      !verdict.retry ||
      attempt.index >= this.maxAttempts ||
      settings.clock() + delayMs >= this.deadlineAt ||
      (settings.budget !== undefined && !settings.budget.tryRetry())
    ) {
      attempt.commit();
      throw finalError;
    }
    this.lastDelayMs = delayMs;
    this.onRetry?.({ path: this.path, attempt: attempt.index + 1, delayMs, code: status.code });
    if (delayMs > 0) await settings.sleep(delayMs, signal);
    if (signal?.aborted) throw abortErrorFor(signal);
  }
}
