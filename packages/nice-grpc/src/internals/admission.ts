import { type CallOutcome, isQueueFullError } from '@breakwater/core';
import { isProbePermit } from '@breakwater/core/breaker';
import type { GrpcCircuits, GrpcMethodCircuit } from '@breakwater/core/grpc';
import {
  admitGrpcCall,
  type GrpcAdmissionParts,
  grpcLimitOutcome,
} from '@breakwater/core/internal';
import type { LimitOutcome, LimitPermit, Pool } from '@breakwater/core/types';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { abortErrorFor, failureStatus, refusal } from './errors.js';
import { callNext, type MiddlewareResult, stepMiddleware, type UnaryStep } from './next.js';

/** What admits a call before its attempts: any of a circuit registry, a token bucket, a pool or adaptive limits. @internal */
export type Admission = GrpcAdmissionParts;

/**
 * The circuit, rate-limit and concurrency stage, in that order: an open
 * circuit refuses before a token or a slot is spent; a refused token or slot
 * (`RESOURCE_EXHAUSTED`, never sent) is neutral for the circuit; a call
 * counts once for its circuit (a half-open probe runs with `retry: false,
 * hedge: false`), takes one token and holds one slot — a
 * response stream until it ends — whatever its attempts. Each single-purpose
 * middleware is this stage with one part; `resilienceMiddleware` runs it
 * with all three as one step.
 * @internal
 */
export function admissionStage(admission: Admission): ClientMiddleware {
  return stepMiddleware(admissionStep(admission, callNext), admissionStream(admission));
}

/**
 * The admission stage of a call without a response stream (not an async
 * function: its frame would cost about 400 B a call).
 * @internal
 */
export function admissionStep(admission: Admission, below: UnaryStep): UnaryStep {
  return function admitted<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): Promise<Response> {
    const ticket = new Ticket(admission, call.method.path, callOptions.signal);
    let result: Promise<Response>;
    try {
      const waiting = ticket.admit(callOptions);
      result =
        waiting === undefined
          ? below(call, ticket.options(callOptions))
          : waiting.then((release) => {
              ticket.release = release;
              return below(call, ticket.options(callOptions));
            });
    } catch (error) {
      return ticket.lost(error);
    }
    // Arrows here, not on the ticket: they share this call's context (the queued branch
    // already needs one), and a transpiler that keeps function names (esbuild keepNames,
    // as tsx runs) renames a named closure on every call (about 0.6 KB).
    return result.then(
      (value) => ticket.won(value) as Response,
      (error: unknown) => ticket.lost(error),
    );
  };
}

/** The admission stage of a response stream: its slot is held until the stream ends. @internal */
export function admissionStream(admission: Admission): ClientMiddleware {
  return async function* admittedStream<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    const ticket = new Ticket(admission, call.method.path, callOptions.signal);
    try {
      const waiting = ticket.admit(callOptions);
      if (waiting !== undefined) ticket.release = await waiting;
      const result = yield* call.next(call.request, ticket.options(callOptions));
      // Not a latency sample for the adaptive limit: a stream's length is its consumer's.
      ticket.outcome = 'success';
      return result;
    } catch (error) {
      ticket.failed(error);
      throw error;
    } finally {
      ticket.leave();
    }
  };
}

/**
 * One call's way through the stage: {@link admit} takes the circuit's
 * permit, a token and a slot in core's one order (`admitCall`); {@link leave}
 * gives back what was taken, with the call's outcome.
 */
class Ticket {
  readonly method: GrpcMethodCircuit | undefined;
  permit = -1;
  startedAt = 0;
  /** A stream its consumer leaves early ends in `finally` with neither result: neutral. */
  outcome: CallOutcome = 'neutral';
  taken = false;
  release: (() => void) | undefined = undefined;
  /** The call's slot under its method's adaptive limit, and what the call's end tells that limit. */
  limit: LimitPermit | undefined = undefined;
  limitOutcome: LimitOutcome = 'ignored';

  /** The call succeeded with `value`. */
  won(value: unknown): unknown {
    this.outcome = 'success';
    this.limitOutcome = 'answered';
    this.leave();
    return value;
  }

  /** The call failed with `error` (throws it). */
  lost(error: unknown): never {
    this.failed(error);
    this.leave();
    throw error;
  }

  constructor(
    private readonly a: Admission,
    private readonly path: string,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.method = a.circuits?.methodCircuit(path);
  }

  /**
   * Admits the call (circuit, token, slot) or throws its refusal: `undefined`
   * once admitted, else the wait for a slot in the pool's queue.
   */
  admit(callOptions: CallOptions): Promise<() => void> | undefined {
    const signal = this.signal;
    // An aborted call takes nothing.
    if (signal?.aborted) throw abortErrorFor(signal);
    const admission = admitGrpcCall(
      this.a,
      this.path,
      (callOptions as { criticality?: unknown }).criticality,
    );
    if (!admission.admitted) throw refusal(this.path, admission.code, admission.error);
    this.permit = admission.permit;
    const { circuits, pool } = this.a;
    if (circuits !== undefined) this.startedAt = circuits.clock();
    this.limit = admission.limit;
    this.taken = admission.slot === 'taken';
    return admission.slot === 'queue' ? queued(pool as Pool, this.path, signal) : undefined;
  }

  /** The options below: a half-open probe is never retried or hedged (one attempt, whose failure re-opens the circuit). */
  options(callOptions: CallOptions): CallOptions {
    return isProbePermit(this.permit) ? probeOptions(callOptions) : callOptions;
  }

  failed(error: unknown): void {
    const status = failureStatus(error, this.signal);
    // A call its caller cancelled says nothing of the method's latency.
    if (this.limit !== undefined && status !== undefined) {
      this.limitOutcome = grpcLimitOutcome(status.code, false);
    }
    if (this.method === undefined || status === undefined) return;
    this.outcome = (this.a.circuits as GrpcCircuits).outcomeOf(
      this.path,
      status.code,
      status.details,
      undefined,
      false,
      isProbePermit(this.permit),
    );
  }

  leave(): void {
    if (this.taken) (this.a.pool as Pool).give(this.outcome === 'success');
    else this.release?.();
    this.limit?.release(this.limitOutcome);
    const method = this.method;
    if (method !== undefined && this.permit >= 0) {
      const clock = (this.a.circuits as GrpcCircuits).clock;
      method.breaker.release(this.permit, {
        outcome: this.outcome,
        durationMs: clock() - this.startedAt,
      });
    }
  }
}

/** The options a probe runs with below the circuit: the retry stage's per-call `retry: false, hedge: false`. */
function probeOptions(options: CallOptions): CallOptions {
  return Object.assign({}, options, { retry: false, hedge: false });
}

/** Waits for a slot in the pool's queue; resolves with the function that gives it back. */
function queued(pool: Pool, path: string, signal: AbortSignal | undefined): Promise<() => void> {
  return new Promise((admitted, refused) => {
    // The pool task holds the slot until the call lets `done` resolve.
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    pool
      .run(
        () => {
          admitted(release);
          return done;
        },
        signal === undefined ? undefined : { signal },
      )
      .catch((error: unknown) => {
        if (isQueueFullError(error)) refused(refusal(path, Status.RESOURCE_EXHAUSTED, error));
        else refused(signal?.aborted ? abortErrorFor(signal) : error);
      });
  });
}
