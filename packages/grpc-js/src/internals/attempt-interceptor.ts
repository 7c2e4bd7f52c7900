import type { InterceptorOptions } from '@grpc/grpc-js';
import { type AttemptPlan, MultiAttemptCall } from './multi-attempt-call.js';
import type { Stage } from './stage.js';

type MethodDefinition = InterceptorOptions['method_definition'];

/**
 * A stage that runs each call of a method with `plan(method)` attempts, or
 * passes it straight through when the plan is `undefined` (unsafe methods,
 * request streams): the pass-through path allocates nothing.
 * Plans are built once per method path.
 * @internal
 */
export function attemptStage(plan: (method: MethodDefinition) => AttemptPlan | undefined): Stage {
  const plans = new Map<string, AttemptPlan | undefined>();
  return {
    intercept(options, chain, index, final) {
      const method = options.method_definition;
      let p = plans.get(method.path);
      if (p === undefined && !plans.has(method.path)) {
        p = plan(method);
        plans.set(method.path, p);
      }
      if (p === undefined) return chain.next(options, index, final);
      return new MultiAttemptCall(p, options, chain, index, final);
    },
  };
}
