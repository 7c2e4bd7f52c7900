import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';

/** `call.next` of a unary or client-streaming call: a generator that only returns. @internal */
export type UnaryNext<Response> = (
  request: unknown,
  options: CallOptions,
) => AsyncGenerator<never, Response, undefined>;

/** `call.next` of a server-streaming or bidi call. @internal */
export type StreamNext<Response> = (
  request: unknown,
  options: CallOptions,
) => AsyncGenerator<Response, void, undefined>;

/** The `next` of `call`, typed for a call without a response stream. @internal */
export function unaryNext<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
): UnaryNext<Response> {
  return call.next as UnaryNext<Response>;
}

/** The `next` of `call`, typed for a call with a response stream. @internal */
export function streamNext<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
): StreamNext<Response> {
  return call.next as StreamNext<Response>;
}

/** Runs a unary `next()` to its result (it never yields, so one step settles it). @internal */
export function unaryResult<Response>(
  generator: AsyncGenerator<never, Response, undefined>,
): Promise<Response> {
  return generator.next().then(stepValue) as Promise<Response>;
}

function stepValue<Response>(step: IteratorResult<never, Response>): Response {
  return step.value as Response;
}

/**
 * What a nice-grpc client middleware returns: it yields a stream's messages
 * and returns a unary call's response.
 * @internal
 */
// biome-ignore lint/suspicious/noConfusingVoidType: nice-grpc's ClientMiddleware is typed `Response | void`.
export type MiddlewareResult<Response> = AsyncGenerator<Response, Response | void, undefined>;

/**
 * One stage of a call without a response stream (unary or client stream):
 * takes the call and its options and hands them on to the stage below,
 * resolving with the response. Stages built on each other once, at the
 * middleware's construction, run a call in one generator (the middleware's)
 * instead of one each.
 * @internal
 */
export type UnaryStep = <Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
) => Promise<Response>;

/** The step below the last stage: nice-grpc's own `next`. @internal */
export const callNext: UnaryStep = (call, options) =>
  unaryResult(unaryNext(call)(call.request, options));

/**
 * A middleware that runs calls without a response stream through `unary`
 * and response streams through `stream`.
 * @internal
 */
export function stepMiddleware<Options = CallOptions>(
  unary: UnaryStep,
  stream: ClientMiddleware<Options>,
): ClientMiddleware<Options> {
  return async function* steps<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions & Partial<Options>,
  ): MiddlewareResult<Response> {
    if (call.responseStream)
      return yield* stream(call, options as CallOptions & Partial<Options & {}>);
    return await unary(call, options);
  };
}
