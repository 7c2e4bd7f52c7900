import { currentInbound, PROPAGATION_HEADERS } from '@breakwater/core';
import { createInboundCall, inboundFromHeaders, runInbound } from '@breakwater/core/node';
import type { CallContext, ServerMiddleware, ServerMiddlewareCall } from 'nice-grpc-common';

/**
 * A nice-grpc server middleware that runs each handler serving its inbound
 * call: Breakwater clients inside it inherit the call's deadline (less
 * `propagate.marginMs`), its cancellation (`context.signal`) and its attempt,
 * with no code in the handler. grpc-js hides `grpc-timeout` from every
 * handler, so the deadline comes from `x-breakwater-timeout-ms`, which
 * Breakwater clients send beside it, or from `breakwaterServerInterceptor`
 * of `@breakwater/grpc-js` when the server has it too. A failing answer after
 * an overloaded downstream call carries `grpc-retry-pushback-ms: -1`.
 * @example
 * const server = createServer().use(breakwaterServerMiddleware());
 */
export function breakwaterServerMiddleware(): ServerMiddleware {
  return async function* breakwaterServer<Request, Response>(
    call: ServerMiddlewareCall<Request, Response>,
    context: CallContext,
  ) {
    const header = (name: string) => {
      const value = context.metadata.get(name);
      return value === undefined ? undefined : String(value);
    };
    const fromHeaders = inboundFromHeaders(header, context.signal);
    const ambient = currentInbound();
    const inbound =
      ambient === undefined || ambient.deadline === undefined
        ? fromHeaders
        : createInboundCall({
            signal: context.signal,
            deadline: Math.min(ambient.deadline, fromHeaders.deadline ?? Number.POSITIVE_INFINITY),
            attempt: fromHeaders.attempt,
            criticality: fromHeaders.criticality,
          });
    const handler = call.next(call.request, context);
    try {
      // Each step of the handler runs serving the call: a generator's body runs in the caller's context.
      for (;;) {
        const step = await runInbound(inbound, () => handler.next());
        if (step.done) return step.value;
        yield step.value;
      }
    } catch (error) {
      if (inbound.overloaded) context.trailer.set(PROPAGATION_HEADERS.grpc.pushback, '-1');
      throw error;
    }
  };
}
