import { MAX_ATTEMPTS } from '@breakwater/core';
import { type AttemptEngine, checkNumber } from '@breakwater/core/internal';
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';
import type { RetryCallOptions } from '../retry-middleware.js';
import { callOptionError } from './errors.js';
import { hedgedCall } from './hedged-call.js';
import { type MiddlewareResult, type UnaryStep, unaryResult } from './next.js';
import { type AttemptStage, ownOptions, passThrough } from './parts.js';
import { RetryChain, retriedStream } from './retry-chain.js';

/**
 * `engine` with `attempts` per call, `undefined` for a single attempt; an
 * invalid count is the call's `INVALID_ARGUMENT` `ClientError`, naming the option.
 */
function withAttempts(
  engine: AttemptEngine | undefined,
  attempts: number | undefined,
  path: string,
) {
  if (engine === undefined || attempts === undefined || attempts === engine.attempts) return engine;
  try {
    checkNumber('attempts', attempts, { integer: true, min: 1, max: MAX_ATTEMPTS });
  } catch (error) {
    throw callOptionError(path, error as Error);
  }
  return attempts < 2 ? undefined : engine.withAttempts(attempts);
}

/**
 * The retry/hedge stage of a call without a response stream: one stage for
 * both, so a hedged call is never also retried. Per call it picks the
 * hedging engine (unary calls of idempotent methods, when hedging is on),
 * else the retry engine; a client stream passes through with the time left.
 * @internal
 */
export function attemptsStep(stage: AttemptStage): UnaryStep {
  return function attempts<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & RetryCallOptions,
  ): Promise<Response> {
    const options = ownOptions(callOptions);
    if (call.requestStream)
      return unaryResult<Response>(passThrough(stage, call, options) as never);
    const safe = stage.isIdempotent(call.method);
    const { hedge, attempts: count } = callOptions;
    try {
      const hedger =
        hedge === false || !(hedge || safe)
          ? undefined
          : withAttempts(stage.hedge, count, call.method.path);
      if (hedger !== undefined) return hedgedCall(stage, hedger, call, options);
      return chainOf(stage, call, callOptions, options, safe).result() as Promise<Response>;
    } catch (error) {
      // A bad per-call option rejects the call, as any failure does: the stages above release what they took.
      return Promise.reject(error);
    }
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
    const safe = stage.isIdempotent(call.method);
    return yield* retriedStream<Response>(chainOf(stage, call, callOptions, options, safe));
  };
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
  const engine = retry === false ? undefined : withAttempts(stage.retry, count, call.method.path);
  if (engine !== undefined && !safe && retry !== true) stage.warn?.(call.method.path);
  const any = call as ClientMiddlewareCall<unknown, unknown>;
  return new RetryChain(stage, engine, any, options, safe || retry === true);
}
