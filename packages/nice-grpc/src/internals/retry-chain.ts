import { type ErrorVerdict, isDeadlineExceededError, withTimeout } from '@breakwater/core';
import type { GrpcRetryEvent, GrpcStatusClassifier } from '@breakwater/core/grpc';
import {
  type AttemptEngine,
  type AttemptTimeout,
  claimTelemetry,
  notify,
  type RetryLoopHooks,
  runAttempts,
  type TelemetryScope,
} from '@breakwater/core/internal';
import type { Clock, Sleep } from '@breakwater/core/time';
import { type CallOptions, type ClientMiddlewareCall, Status } from 'nice-grpc-common';
import { Attempt } from './attempt.js';
import { type DeadlineOption, deadlineAt } from './deadline.js';
import { abortErrorFor, attemptDeadline, failureStatus, isAbortError, refusal } from './errors.js';
import type { StreamNext, UnaryNext } from './next.js';
import { telemetryErrorType } from './telemetry.js';
import { judgeAttempt } from './verdict.js';

/** What every call of one attempts stage shares. @internal */
export interface ChainSettings {
  classify: GrpcStatusClassifier;
  /** Deadline of each unary attempt (derived per attempt unless `attemptTimeoutMs` was given). */
  attemptTimeout: AttemptTimeout;
  onRetry: ((event: GrpcRetryEvent) => void) | undefined;
  clock: Clock;
  sleep: Sleep;
}

/** A server stream whose first step has been taken. @internal */
export interface OpenStream<Response> {
  messages: AsyncGenerator<Response, void, undefined>;
  first: IteratorResult<Response, void>;
}

/**
 * The attempts of one call, one after another, each decided by the engine.
 * Each attempt gets the time left before the call's deadline as
 * `grpc-timeout` (less under `attemptTimeoutMs`) and
 * `grpc-previous-rpc-attempts` from the second on. A server stream is
 * retried only until its first message.
 * @internal
 */
export class RetryChain implements RetryLoopHooks<unknown> {
  private last: Attempt | undefined;
  /** Clock time the latest attempt started. */
  private lastStartedAt = 0;
  /** The latest attempt's own deadline in ms (when it had one). */
  private lastLimitMs = 0;
  private readonly deadline: number;
  /** The call's telemetry (the middleware's `telemetry` option), reported by core's loop. */
  readonly telemetry: TelemetryScope | undefined;
  readonly errorType = telemetryErrorType;

  constructor(
    private readonly s: ChainSettings,
    private readonly engine: AttemptEngine | undefined,
    private readonly call: ClientMiddlewareCall<unknown, unknown>,
    private readonly options: CallOptions,
    private readonly idempotent: boolean,
  ) {
    this.deadline = deadlineAt((options as DeadlineOption).deadline, s.clock);
    engine?.budget?.recordRequest();
    this.telemetry = claimTelemetry(options);
  }

  /**
   * The unary response, or the {@link OpenStream}, of the first attempt that
   * succeeds. Not an async function: its frame costs about 0.4 KB a call,
   * the two arrows below a tenth of that.
   */
  result(): Promise<unknown> {
    return runAttempts(this.engine, this, this.options.signal, this.deadline).then(
      (outcome) => {
        this.last?.commit();
        if (!this.call.responseStream) {
          const now = this.s.clock();
          this.s.attemptTimeout.observe(this.call.method.path, now - this.lastStartedAt, now);
        }
        return this.call.responseStream ? outcome : (outcome as IteratorResult<never>).value;
      },
      (last: unknown) => {
        throw this.fail(last);
      },
    );
  }

  run(n: number): Promise<unknown> {
    const now = this.s.clock();
    this.lastStartedAt = now;
    const left = this.deadline - now;
    const { next, request, responseStream, method } = this.call;
    // A timed-out attempt is repeated only for a method safe to repeat, within the attempts.
    const engine = this.engine;
    const retryMayFollow = engine !== undefined && this.idempotent && n < engine.attempts;
    const limit = this.s.attemptTimeout.forAttempt(method.path, left, retryMayFollow, now);
    const own = !responseStream && limit < left;
    this.lastLimitMs = limit;
    const attempt = new Attempt(this.options, n, own ? limit : left, undefined, own, !!engine);
    this.last = attempt;
    if (responseStream) return open(next as StreamNext<unknown>, request, attempt);
    // A unary attempt settles with nice-grpc's last step, `{ done: true, value }`: `result`
    // takes the response out once, not each attempt through a `then` of its own.
    if (!own) return (next as UnaryNext<unknown>)(request, attempt.options).next();
    const signal = this.options.signal;
    return withTimeout(
      (s) => {
        attempt.options.signal = s;
        return (next as UnaryNext<unknown>)(request, attempt.options).next();
      },
      signal === undefined
        ? { timeoutMs: limit, sleep: this.s.sleep }
        : { timeoutMs: limit, signal, sleep: this.s.sleep },
    );
  }

  judge(error: unknown): ErrorVerdict {
    const attempt = this.last as Attempt;
    const { s, call, deadline, idempotent } = this;
    return judgeAttempt(s, call.method.path, attempt, error, deadline, idempotent);
  }

  retrying(attempt: number, delayMs: number, error: unknown): void {
    const code = failureStatus(error, undefined)?.code ?? Status.DEADLINE_EXCEEDED;
    notify(this.s.onRetry, { path: this.call.method.path, attempt, delayMs, code });
  }

  /** The call's final error, in the words nice-grpc callers expect. */
  private fail(error: unknown): unknown {
    this.last?.commit();
    const signal = this.options.signal;
    if (signal?.aborted) return isAbortError(error) ? error : abortErrorFor(signal);
    const path = this.call.method.path;
    // The attempt's own, earlier deadline ended it (our timer or the server's): say so.
    if (this.last?.perAttempt === true) return attemptDeadline(path, this.lastLimitMs, error);
    return isDeadlineExceededError(error) ? refusal(path, Status.DEADLINE_EXCEEDED, error) : error;
  }
}

async function open(
  next: StreamNext<unknown>,
  request: unknown,
  attempt: Attempt,
): Promise<OpenStream<unknown>> {
  const messages = next(request, attempt.options);
  return { messages, first: await messages.next() };
}

/** The messages of a retried server stream (the chain's first success). @internal */
export async function* retriedStream<Response>(
  chain: RetryChain,
): AsyncGenerator<Response, void, undefined> {
  const { messages, first } = (await chain.result()) as OpenStream<Response>;
  if (first.done) return;
  let delegated = false;
  try {
    yield first.value;
    delegated = true;
    yield* messages;
  } finally {
    // A consumer that leaves before the second step: end the stream it never reached.
    if (!delegated) await messages.return(undefined);
  }
}
