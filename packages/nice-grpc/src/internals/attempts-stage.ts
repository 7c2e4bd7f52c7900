import { MAX_ATTEMPTS } from '@breakwater/core';
import { type AttemptEngine, checkNumber } from '@breakwater/core/internal';
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';
import type { RetryCallOptions } from '../retry-middleware.js';
import { hedgedCall } from './hedged-call.js';
import {
  type MiddlewareResult,
  stepMiddleware,
  type UnaryNext,
  type UnaryStep,
  unaryNext,
  unaryResult,
} from './next.js';
import { type AttemptStage, passThrough } from './parts.js';
import { RetryChain, retriedStream } from './retry-chain.js';

/** `engine` with `attempts` per call, `undefined` for a single attempt. */
function withAttempts(engine: AttemptEngine | undefined, attempts: number | undefined) {
  if (engine === undefined || attempts === undefined || attempts === engine.attempts) return engine;
  checkNumber('attempts', attempts, { integer: true, min: 1, max: MAX_ATTEMPTS });
  return attempts < 2 ? undefined : engine.withAttempts(attempts);
}

/**
 * The retry/hedge stage: one middleware for both, so a hedged call is never
 * also retried. Per call it picks the hedging engine (unary calls of
 * idempotent methods, when hedging is on), else the retry engine; client and
 * bidi streams pass through with the time left.
 * @internal
 */
export function attemptsMiddleware(stage: AttemptStage): ClientMiddleware<RetryCallOptions> {
  return stepMiddleware(attemptsStep(stage), attemptsStream(stage));
}

/** The retry/hedge stage of a call without a response stream. @internal */
export function attemptsStep(stage: AttemptStage): UnaryStep {
  return function attempts<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & RetryCallOptions,
  ): Promise<Response> {
    const options = ownOptions(callOptions);
    if (call.requestStream) {
      return unaryResult(passThrough(stage, call, options) as AsyncGenerator<never, Response>);
    }
    const safe = stage.isIdempotent(call.method);
    const { hedge, attempts: count } = callOptions;
    const hedger =
      hedge === false || !(hedge || safe) ? undefined : withAttempts(stage.hedge, count);
    if (hedger !== undefined) {
      return hedgedCall(stage, hedger, call.method.path, options, unaryNext(call), call.request);
    }
    return chainOf(stage, call, callOptions, options, safe).result() as Promise<Response>;
  };
}

/** The retry stage of a response stream (a bidi stream passes through). @internal */
export function attemptsStream(stage: AttemptStage): ClientMiddleware<RetryCallOptions> {
  return async function* attemptedStream<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & RetryCallOptions,
  ): MiddlewareResult<Response> {
    const options = ownOptions(callOptions);
    if (call.requestStream) return yield* passThrough(stage, call, options);
    const chain = chainOf(stage, call, callOptions, options, stage.isIdempotent(call.method));
    return yield* retriedStream<Response>(chain);
  };
}

/** The options below the stage: the caller's, without the stage's own per-call keys. */
function ownOptions(callOptions: CallOptions & RetryCallOptions): CallOptions {
  const { retry, hedge, attempts } = callOptions;
  return retry === undefined && hedge === undefined && attempts === undefined
    ? callOptions
    : withoutCallKeys(callOptions);
}

/** The retry chain of one call, on the retry engine its options and method allow. */
function chainOf<Request, Response>(
  stage: AttemptStage,
  call: ClientMiddlewareCall<Request, Response>,
  callOptions: RetryCallOptions,
  options: CallOptions,
  safe: boolean,
): RetryChain {
  const { retry, attempts: count } = callOptions;
  const path = call.method.path;
  const engine = retry === false ? undefined : withAttempts(stage.retry, count);
  if (engine !== undefined && !safe && retry !== true) stage.warn?.(path);
  return new RetryChain(
    stage,
    engine,
    path,
    options,
    safe || retry === true,
    call.next as UnaryNext<unknown>,
    call.request,
    call.responseStream,
  );
}

function withoutCallKeys(options: CallOptions & RetryCallOptions): CallOptions {
  const { retry: _r, hedge: _h, attempts: _a, ...rest } = options;
  return rest;
}
