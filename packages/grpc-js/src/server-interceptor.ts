import { PROPAGATION_HEADERS } from '@breakwater/core';
import { parseCriticality } from '@breakwater/core/internal';
import { createInboundCall, runInbound } from '@breakwater/core/node';
import {
  Metadata,
  ResponderBuilder,
  ServerInterceptingCall,
  type ServerInterceptor,
  ServerListenerBuilder,
  status as Status,
} from '@grpc/grpc-js';

/**
 * A grpc-js server interceptor that runs each handler serving its inbound
 * call: Breakwater clients inside the handler inherit the call's deadline
 * (less `propagate.marginMs`), its cancellation and its attempt number, with
 * no code in the handler. When a downstream call ended overloaded (retries
 * exhausted, budget refused, circuit open), a failing answer carries the
 * trailer `grpc-retry-pushback-ms: -1` (gRFC A6: don't retry).
 * @example
 * const server = new Server({ interceptors: [breakwaterServerInterceptor()] });
 */
export function breakwaterServerInterceptor(): ServerInterceptor {
  return (_method, call) => {
    const controller = new AbortController();
    let inbound: ReturnType<typeof createInboundCall> | undefined;
    const serving =
      <A extends unknown[]>(next: (...args: A) => void) =>
      (...args: A) =>
        inbound === undefined ? next(...args) : runInbound(inbound, () => next(...args));
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const header = (name: string) => {
          const value = metadata.get(name)[0];
          return value === undefined ? undefined : String(value);
        };
        const deadline = +call.getDeadline();
        const previous = Number(header(PROPAGATION_HEADERS.grpc.previousAttempts) ?? 0);
        inbound = createInboundCall({
          signal: controller.signal,
          deadline: Number.isFinite(deadline) ? deadline : undefined,
          attempt: Number.isInteger(previous) && previous >= 0 ? previous + 1 : 1,
          criticality: parseCriticality(header(PROPAGATION_HEADERS.grpc.criticality)),
        });
        serving(next)(metadata);
      })
      .withOnReceiveMessage((message, next) => serving(next)(message))
      .withOnReceiveHalfClose((next) => serving(next)())
      .withOnCancel(() => controller.abort(new Error('The inbound call was cancelled')))
      .build();
    const responder = new ResponderBuilder()
      .withStart((next) => next(listener))
      .withSendStatus((status, next) => {
        if (status.code !== Status.OK && inbound?.overloaded) {
          const metadata = status.metadata ?? new Metadata();
          metadata.set(PROPAGATION_HEADERS.grpc.pushback, '-1');
          next({ ...status, metadata });
        } else {
          next(status);
        }
      })
      .build();
    return new ServerInterceptingCall(call, responder);
  };
}
