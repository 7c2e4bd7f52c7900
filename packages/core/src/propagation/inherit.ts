import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { OperationAbortedError } from '../errors/operation-aborted-error.js';
import { onAbort } from '../internal/on-abort.js';
import type { ErrorVerdict } from '../retry/verdict.js';
import { systemClock } from '../time/clock.js';
import { systemSleep } from '../time/sleep.js';
import { onInboundCancel } from './cancel-fanout.js';
import { currentInbound, type InboundCall } from './inbound.js';
import { downstreamFailed, endedOverloaded } from './overloaded.js';
import type { PropagatePlan } from './propagate-options.js';

/**
 * What one outbound call inherits from the inbound call it runs under: every
 * client stack reads it the same way at the start of a call.
 * @internal
 */
export interface Inheritance {
  readonly inbound: InboundCall;
  /** Wall-clock ms (epoch ms, as `systemClock` reads) the outbound call must end by: the inbound deadline less the margin; `undefined` for none. */
  readonly deadline: number | undefined;
  /** Ms left until {@link Inheritance.deadline} (`Infinity` for none; 0 or less once passed). */
  remainingMs(): number;
  /** A signal that aborts when `caller` does or the inbound call is cancelled; `release()` drops both listeners. */
  link(caller: AbortSignal | undefined): LinkedSignal;
  /**
   * {@link Inheritance.link}, and also aborted with a `DeadlineExceededError`
   * at the inherited deadline: for a stack whose own deadline arms no timer
   * (the router's `deadlineAt`).
   */
  linkUntilDeadline(caller: AbortSignal | undefined): LinkedSignal;
  /** The outbound call succeeded (its stack's recent calls, which the overload rule reads). */
  succeeded(): void;
  /** Tells the inbound call how the outbound call failed: overload makes its server answer don't-retry. */
  failed(error: unknown, verdict: ErrorVerdict | undefined): void;
}

/** A signal linked to a caller's and the inbound call's cancellation. @internal */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Aborts the signal with `reason` (once; later aborts change nothing). */
  abort(reason: Error): void;
  release(): void;
}

/**
 * The inheritance of an outbound call starting now, or `undefined` outside a
 * bound handler, with `propagate: false` on the stack (`plan` undefined) or
 * on the call (`perCall` false).
 * @internal
 */
export function inheritInbound(
  plan: PropagatePlan | undefined,
  perCall?: false | undefined,
): Inheritance | undefined {
  if (plan === undefined || perCall === false) return undefined;
  const inbound = currentInbound();
  if (inbound === undefined) return undefined;
  const deadline = inbound.deadline === undefined ? undefined : inbound.deadline - plan.marginMs;
  return {
    inbound,
    deadline,
    remainingMs: () =>
      deadline === undefined ? Number.POSITIVE_INFINITY : deadline - systemClock(),
    link: (caller) => linkSignal(inbound, caller),
    linkUntilDeadline(caller) {
      const linked = linkSignal(inbound, caller);
      if (deadline === undefined) return linked;
      const released = new AbortController();
      systemSleep(Math.max(0, deadline - systemClock()), released.signal).then(
        () =>
          linked.abort(
            new DeadlineExceededError(undefined, {
              message: 'Deadline exceeded: the inbound call’s deadline (less the margin) passed',
            }),
          ),
        // Released before the deadline: the request ended on its own.
        () => {},
      );
      return {
        signal: linked.signal,
        abort: linked.abort,
        release() {
          released.abort();
          linked.release();
        },
      };
    },
    succeeded: () => plan.recent.record(false),
    failed(error, verdict) {
      // A caller that is gone hears no answer, and its cancellation says nothing of the downstream.
      if (inbound.signal.aborted) return;
      if (inbound.deadline !== undefined && systemClock() >= inbound.deadline) return;
      plan.recent.record(downstreamFailed(error, verdict));
      if (endedOverloaded(error, verdict, plan.recent)) inbound.markOverloaded(errorName(error));
    },
  };
}

function linkSignal(inbound: InboundCall, caller: AbortSignal | undefined): LinkedSignal {
  const controller = new AbortController();
  const stopWaiting = onInboundCancel(inbound, () =>
    controller.abort(
      inbound.signal.reason instanceof Error
        ? inbound.signal.reason
        : new OperationAbortedError({ cause: inbound.signal.reason }),
    ),
  );
  const stopCaller =
    caller === undefined ? undefined : onAbort(caller, () => controller.abort(caller.reason));
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    release() {
      stopWaiting();
      stopCaller?.();
    },
  };
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
