import type { Interceptor, InterceptorOptions } from '@grpc/grpc-js';
import { type AttemptPlan, MultiAttemptCall } from './multi-attempt-call.js';
import { asInterceptingCall } from './refused-call.js';

type MethodDefinition = InterceptorOptions['method_definition'];

/**
 * An interceptor that runs each call of a method with `plan(method)` attempts,
 * or passes it straight through when the plan is `undefined` (unsafe methods,
 * request streams): the pass-through path allocates nothing.
 * Plans are built once per method path.
 * @internal
 */
export function attemptInterceptor(
  plan: (method: MethodDefinition) => AttemptPlan | undefined,
): Interceptor {
  const plans = new Map<string, AttemptPlan | undefined>();
  return (options, nextCall) => {
    const method = options.method_definition;
    let p = plans.get(method.path);
    if (p === undefined && !plans.has(method.path)) {
      p = plan(method);
      plans.set(method.path, p);
    }
    if (p === undefined) return asInterceptingCall(nextCall(options));
    return asInterceptingCall(new MultiAttemptCall(p, options, nextCall));
  };
}
