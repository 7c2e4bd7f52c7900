import type { CallOptions, ClientMiddlewareCall } from 'nice-grpc-common';

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
