import type { Clock } from '@breakwater/core';
import type { InterceptorOptions } from '@grpc/grpc-js';
import { withDeadline } from './deadline-stage.js';
import { type AttemptPlan, MultiAttemptCall } from './multi-attempt-call.js';
import type { Stage } from './stage.js';

type MethodDefinition = InterceptorOptions['method_definition'];

/**
 * A stage that runs each call of a method with `plan(method)` attempts, or
 * passes it straight through when the plan is `undefined` (request streams,
 * no retries for the method) — under `attemptTimeoutMs` when one is set, its
 * only attempt's deadline. The pass-through path allocates nothing more.
 * Plans are built once per method path.
 * @internal
 */
export function attemptStage(
  plan: (method: MethodDefinition) => AttemptPlan | undefined,
  attemptTimeoutMs: number,
  clock: Clock,
): Stage {
  const plans = new Map<string, AttemptPlan | undefined>();
  return {
    intercept(options, chain, index, final) {
      const method = options.method_definition;
      let p = plans.get(method.path);
      if (p === undefined && !plans.has(method.path)) {
        p = plan(method);
        plans.set(method.path, p);
      }
      if (p !== undefined) return new MultiAttemptCall(p, options, chain, index, final);
      if (attemptTimeoutMs === Number.POSITIVE_INFINITY) return chain.next(options, index, final);
      return withDeadline(options, attemptTimeoutMs, clock, chain, index, final);
    },
  };
}
