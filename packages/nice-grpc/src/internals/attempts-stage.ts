import type { AttemptEngine } from '@breakwater/core/internal';
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';
import type { RetryCallOptions } from '../retry-middleware.js';
import { hedgedCall } from './hedged-call.js';
import { type MiddlewareResult, type UnaryStep, unaryResult } from './next.js';
import { type AttemptStage, ownOptions, passThrough } from './parts.js';
import { RetryChain, retriedStream } from './retry-chain.js';

/** `engine` with `attempts` per call (checked by `ownOptions`), `undefined` for a single attempt. */
function withAttempts(engine: AttemptEngine | undefined, attempts: number | undefined) {
  if (engine === undefined || attempts === undefined || attempts === engine.attempts) return engine;
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
    const options = ownOptions(callOptions, call.method.path);
    if (call.requestStream)
      return unaryResult<Response>(passThrough(stage, call, options) as never);
    const safe = stage.isIdempotent(call.method);
    const { hedge, attempts: count } = callOptions;
    const hedger =
      hedge === false || !(hedge || safe) ? undefined : withAttempts(stage.hedge, count);
    if (hedger !== undefined) return hedgedCall(stage, hedger, call, options);
    return chainOf(stage, call, callOptions, options, safe).result() as Promise<Response>;
  };
}

/** The retry stage of a response stream (a bidi stream passes through). @internal */
export function attemptsStream(stage: AttemptStage): ClientMiddleware<RetryCallOptions> {
  return async function* attemptedStream<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & RetryCallOptions,
  ): MiddlewareResult<Response> {
    const options = ownOptions(callOptions, call.method.path);
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
  const engine = retry === false ? undefined : withAttempts(stage.retry, count);
  if (engine !== undefined && !safe && retry !== true) stage.warn?.(call.method.path);
  const any = call as ClientMiddlewareCall<unknown, unknown>;
  return new RetryChain(stage, engine, any, options, safe || retry === true);
}
