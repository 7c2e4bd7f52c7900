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
  return function steps<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions & Partial<Options>,
  ): MiddlewareResult<Response> {
    if (call.responseStream) return stream(call, options as CallOptions & Partial<Options & {}>);
    return new UnaryResult(unary, call, options);
  };
}

/**
 * What a middleware returns for a call without a response stream: the
 * generator protocol over one step that only returns, without an async
 * generator's own state (about 1 KB a call). Like a generator's body, the
 * step starts at the first `next()`.
 */
class UnaryResult<Request, Response> implements AsyncGenerator<Response, Response, undefined> {
  private started = false;

  constructor(
    private readonly unary: UnaryStep,
    private readonly call: ClientMiddlewareCall<Request, Response>,
    private readonly options: CallOptions,
  ) {}

  next(): Promise<IteratorResult<Response, Response>> {
    if (this.started) return Promise.resolve(finished as IteratorResult<Response, Response>);
    this.started = true;
    let result: Promise<Response>;
    try {
      result = this.unary(this.call, this.options);
    } catch (error) {
      return Promise.reject(error);
    }
    return result.then(returned) as Promise<IteratorResult<Response, Response>>;
  }

  // Past its one step the result is finished: what a finished generator does.
  return(value: Response | PromiseLike<Response>): Promise<IteratorResult<Response, Response>> {
    this.started = true;
    return Promise.resolve(value).then(returned) as Promise<IteratorResult<Response, Response>>;
  }

  throw(error: unknown): Promise<IteratorResult<Response, Response>> {
    this.started = true;
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return(undefined as Response);
  }
}

const finished: IteratorResult<unknown, undefined> = Object.freeze({
  done: true,
  value: undefined,
});

function returned<Response>(value: Response): IteratorResult<never, Response> {
  return { done: true, value };
}
