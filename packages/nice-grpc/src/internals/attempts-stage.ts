import { MAX_ATTEMPTS } from '@breakwater/core';
import { type AttemptEngine, checkNumber } from '@breakwater/core/internal';
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';
import type { RetryCallOptions } from '../retry-middleware.js';
import { hedgedCall } from './hedged-call.js';
import { type MiddlewareResult, type UnaryNext, unaryNext } from './next.js';
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
  return async function* attempts<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & RetryCallOptions,
  ): MiddlewareResult<Response> {
    const { retry, hedge, attempts: count } = callOptions;
    const options =
      retry === undefined && hedge === undefined && count === undefined
        ? callOptions
        : withoutCallKeys(callOptions);
    if (call.requestStream) return yield* passThrough(stage, call, options);
    const path = call.method.path;
    const safe = stage.isIdempotent(call.method);
    const hedger =
      hedge === false || !(hedge || safe) ? undefined : withAttempts(stage.hedge, count);
    if (hedger !== undefined && !call.responseStream) {
      return await hedgedCall(stage, hedger, path, options, unaryNext(call), call.request);
    }
    const engine = retry === false ? undefined : withAttempts(stage.retry, count);
    if (engine !== undefined && !safe && retry !== true) stage.warn?.(path);
    const repeatable = safe || retry === true;
    const chain = new RetryChain(
      stage,
      engine,
      path,
      options,
      repeatable,
      call.next as UnaryNext<unknown>,
      call.request,
      call.responseStream,
    );
    if (call.responseStream) return yield* retriedStream<Response>(chain);
    return (await chain.result()) as Response;
  };
}

function withoutCallKeys(options: CallOptions & RetryCallOptions): CallOptions {
  const { retry: _r, hedge: _h, attempts: _a, ...rest } = options;
  return rest;
}
