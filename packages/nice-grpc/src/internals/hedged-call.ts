import { type AttemptEngine, claimTelemetry, runHedged } from '@breakwater/core/internal';
import type { CallOptions, ClientMiddlewareCall } from 'nice-grpc-common';
import { Attempt } from './attempt.js';
import { type DeadlineOption, deadlineAt } from './deadline.js';
import { abortErrorFor } from './errors.js';
import { unaryNext, unaryResult } from './next.js';
import type { ChainSettings } from './retry-chain.js';
import { telemetryErrorType } from './telemetry.js';
import { judgeAttempt } from './verdict.js';

/**
 * One hedged unary call on core's hedging driver (`runHedged`): each attempt
 * goes down with the time left as `grpc-timeout` and its own signal, so a
 * loser can be cancelled alone; the attempt whose outcome is the call's hands
 * its held-back header and trailer to the caller.
 * @internal
 */
export function hedgedCall<Request, Response>(
  s: ChainSettings,
  engine: AttemptEngine,
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
): Promise<Response> {
  const deadline = deadlineAt((options as DeadlineOption).deadline, s.clock);
  const attempts: Attempt[] = [];
  return runHedged<Response>(
    engine,
    {
      start(index, signal) {
        const attempt = new Attempt(options, index, deadline - s.clock(), signal);
        attempts[index] = attempt;
        return unaryResult(unaryNext(call)(call.request, attempt.options));
      },
      judge: (error, index) =>
        judgeAttempt(s, call.method.path, attempts[index] as Attempt, error, deadline, true),
      chosen: (index) => attempts[index]?.commit(),
      cancelled: abortErrorFor,
      telemetry: claimTelemetry(options),
      errorType: telemetryErrorType,
    },
    options.signal,
    deadline,
  );
}
