import { DeadlineExceededError, PROPAGATION_HEADERS } from '@breakwater/core';
import { createGrpcStatusClassifier, type GrpcStatusClassifier } from '@breakwater/core/grpc';
import { type Inheritance, inheritInbound, type PropagatePlan } from '@breakwater/core/internal';
import { systemClock } from '@breakwater/core/time';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Metadata,
  Status,
} from 'nice-grpc-common';
import type { DeadlineCallOptions } from '../deadline-middleware.js';
import { deadlineAt } from './deadline.js';
import { refusal } from './errors.js';
import { type MiddlewareResult, streamNext, type UnaryStep } from './next.js';

/** Per-call option of the propagation stage: `propagate: false` opts one call out. */
export interface PropagateCallOptions {
  /** `false`: this call inherits nothing from the inbound call it runs under. Defaults to inheriting. */
  propagate?: false;
}

/** What the stage hands down for one call, and how it ends it. */
interface Inherited {
  options: CallOptions;
  /** Tells the inbound call how the outbound call ended and drops the listeners. */
  end(error?: unknown): void;
}

/** The caller's own deadline (epoch ms): its `deadline` option or `timeoutMs`, whichever ends first. */
function ownDeadline(options: CallOptions & DeadlineCallOptions, timeoutMs: number): number {
  const now = systemClock();
  // A number `deadline` is ms from now (nice-grpc's convention), a Date an instant.
  return Math.min(
    deadlineAt(options.deadline, () => now),
    now + timeoutMs,
  );
}

function inherit<Request, Response>(
  inherited: Inheritance,
  classify: GrpcStatusClassifier,
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
  timeoutMs: number,
): Inherited {
  const path = call.method.path;
  if (inherited.remainingMs() <= 0) {
    throw refusal(path, Status.DEADLINE_EXCEEDED, new DeadlineExceededError(0));
  }
  const own = ownDeadline(options, timeoutMs);
  const inheritedAt = inherited.deadline ?? Number.POSITIVE_INFINITY;
  const linked = inherited.link(options.signal);
  // The `deadline` option is replaced only by an earlier inherited one, so the caller's own
  // reaches the deadline stage (and its messages) as the caller gave it. Each attempt below
  // stamps the time left as it leaves (`x-breakwater-timeout-ms` beside `grpc-timeout`).
  const withTimeout =
    inheritedAt < own ? Object.assign({}, options, { deadline: new Date(inheritedAt) }) : options;
  const metadata = Metadata(withTimeout.metadata);
  const { criticality } = inherited.inbound;
  if (criticality !== undefined) metadata.set(PROPAGATION_HEADERS.grpc.criticality, criticality);
  let trailer: Metadata | undefined;
  const onTrailer = options.onTrailer;
  const down: CallOptions = Object.assign({}, withTimeout, {
    signal: linked.signal,
    metadata,
    onTrailer(received: Metadata) {
      trailer = received;
      onTrailer?.(received);
    },
  });
  return {
    options: down,
    end(error) {
      linked.release();
      if (error === undefined) {
        inherited.succeeded();
        return;
      }
      const code = (error as { code?: unknown }).code;
      const verdict =
        typeof code === 'number'
          ? classify({
              path,
              code,
              trailer: (key) => {
                const value = trailer?.get(key);
                return value === undefined ? undefined : String(value);
              },
            })
          : undefined;
      inherited.failed((error as { cause?: unknown }).cause ?? error, verdict);
    },
  };
}

/** The propagation stage of a call without a response stream. @internal */
export function propagationStep(
  plan: PropagatePlan | undefined,
  timeoutMs: number,
  classify: GrpcStatusClassifier | undefined,
  below: UnaryStep,
): UnaryStep {
  const judge = classify ?? createGrpcStatusClassifier();
  return function propagation<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions & PropagateCallOptions,
  ): Promise<Response> {
    const inherited = inheritInbound(plan, options.propagate);
    if (inherited === undefined) return below(call, options);
    const run = inherit(inherited, judge, call, options, timeoutMs);
    return below(call, run.options).then(
      (response) => {
        run.end();
        return response;
      },
      (error: unknown) => {
        run.end(error);
        throw error;
      },
    );
  };
}

/** The propagation stage of a response stream. @internal */
export function propagationStream(
  plan: PropagatePlan | undefined,
  timeoutMs: number,
  classify: GrpcStatusClassifier | undefined,
): ClientMiddleware<PropagateCallOptions> {
  const judge = classify ?? createGrpcStatusClassifier();
  return async function* propagationMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions & PropagateCallOptions,
  ): MiddlewareResult<Response> {
    const inherited = inheritInbound(plan, options.propagate);
    if (inherited === undefined) {
      return yield* call.next(call.request, options);
    }
    const run = inherit(inherited, judge, call, options, timeoutMs);
    try {
      yield* streamNext(call)(call.request, run.options);
      run.end();
    } catch (error) {
      run.end(error);
      throw error;
    }
  };
}
