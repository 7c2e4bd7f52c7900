import type { GrpcRetryEvent, GrpcStatusClassifier } from '@breakwater/core/grpc';
import type { ResiliencePlan } from '@breakwater/core/internal';
import type { Clock } from '@breakwater/core/time';
import { withDeadline } from './deadline-stage.js';
import { type AttemptPlan, MultiAttemptCall } from './multi-attempt-call.js';
import { isProbeCall } from './probe.js';
import type { Stage } from './stage.js';

/**
 * The `hedge`/`retry` stage. Per method (decided once per path): a request
 * stream, or a method with neither engine, passes straight through (under
 * `attemptTimeoutMs`, its only attempt's deadline); a method `isSafe` selects
 * is hedged when `hedge` is on, else retried; any other method gets the retry
 * engine too, which repeats only failures that never left. A circuit's
 * half-open probe makes one attempt.
 * @internal
 */
export function attemptStage(
  plan: ResiliencePlan,
  isSafe: (path: string) => boolean,
  classify: GrpcStatusClassifier,
  clock: Clock,
): Stage {
  const { retry, hedge, attemptTimeoutMs, attemptTimeout } = plan;
  const onRetry = plan.onRetry as ((event: GrpcRetryEvent) => void) | undefined;
  const plans = new Map<string, AttemptPlan | undefined>();
  return {
    intercept(options, chain, index, final) {
      const method = options.method_definition;
      let p = plans.get(method.path);
      if (p === undefined && !plans.has(method.path)) {
        const safe = isSafe(method.path);
        const engine = safe && hedge !== undefined ? hedge : retry;
        p =
          engine === undefined || method.requestStream
            ? undefined
            : {
                path: method.path,
                responseStream: method.responseStream,
                engine,
                idempotent: safe,
                attemptTimeout,
                classify,
                onRetry: engine === retry ? onRetry : undefined,
              };
        plans.set(method.path, p);
      }
      if (p !== undefined && !isProbeCall(options)) {
        return new MultiAttemptCall(p, options, chain, index, final);
      }
      if (attemptTimeoutMs === Number.POSITIVE_INFINITY) return chain.next(options, index, final);
      return withDeadline(options, attemptTimeoutMs, clock, chain, index, final);
    },
  };
}
