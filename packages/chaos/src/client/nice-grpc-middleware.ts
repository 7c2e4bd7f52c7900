import {
  type CallOptions,
  ClientError,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { type ClientChaosOptions, createChaosPlanner } from './plan.js';

/** Options of {@link chaosMiddleware}. */
export interface ChaosMiddlewareOptions extends ClientChaosOptions {
  /** Status of an injected failure. Defaults to `UNAVAILABLE`. */
  status?: Status;
  /** Details of an injected failure. Defaults to `"chaos: injected <CODE>"`. */
  details?: string;
}

/**
 * A nice-grpc client middleware that injects faults into the caller's own
 * chain: a share of calls fails with a `ClientError` without reaching the
 * network, and a share waits `latency` first (cut short by the call's signal).
 * @example
 * createClientFactory().use(retryMiddleware).use(chaosMiddleware({ errorRate: 0.3 })).create(...)
 */
export function chaosMiddleware(options: ChaosMiddlewareOptions = {}): ClientMiddleware {
  const planner = createChaosPlanner(options);
  const code = options.status ?? Status.UNAVAILABLE;
  if (Status[code] === undefined) {
    throw new RangeError(`status must be a grpc status code, got ${String(options.status)}`);
  }
  const details = options.details ?? `chaos: injected ${Status[code]}`;
  return async function* chaos<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
    // biome-ignore lint/suspicious/noConfusingVoidType: nice-grpc's ClientMiddleware returns exactly this generator type.
  ): AsyncGenerator<Response, Response | void, undefined> {
    const path = call.method.path;
    const plan = planner.plan(path);
    if (plan !== undefined) {
      if (plan.delayMs > 0) await planner.sleep(plan.delayMs, callOptions.signal);
      const reason = callOptions.signal?.aborted ? callOptions.signal.reason : undefined;
      // An aborted caller gets what nice-grpc gives it: the abort error, not the injected fault.
      if (reason !== undefined) throw reason;
      if (plan.fail) throw new ClientError(path, code, details);
    }
    return yield* call.next(call.request, callOptions);
  };
}
