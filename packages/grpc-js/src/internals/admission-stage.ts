import { type CallOutcome, isQueueFullError } from '@breakwater/core';
import { isProbePermit } from '@breakwater/core/breaker';
import type { GrpcCircuits, GrpcMethodCircuit } from '@breakwater/core/grpc';
import {
  admitGrpcCall,
  type GrpcAdmissionParts,
  grpcLimitOutcome,
} from '@breakwater/core/internal';
import type { Clock, Sleep } from '@breakwater/core/time';
import type { LimitPermit, Pool } from '@breakwater/core/types';
import {
  type InterceptorOptions,
  Metadata,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import { trailerGetter } from '../trailer-getter.js';
import { DeferredCall } from './deferred-call.js';
import { type CallObserver, ObservedCall } from './observed-call.js';
import { markProbe } from './probe.js';
import { RefusedCall } from './refused-call.js';
import type { Stage, StageChain } from './stage.js';
import { statusWithCause } from './status.js';
import type { CallLink } from './types.js';

/** What may admit a call (core's gRPC admission parts), and how a queued call keeps its deadline. @internal */
export interface AdmissionParts extends GrpcAdmissionParts {
  /** Reads the wall clock the call's deadline is on. */
  readonly clock: Clock;
  /** Waits out a queued call's deadline. */
  readonly sleep: Sleep;
}

/**
 * The `circuit`, `rateLimit` and `concurrency` stage, below the deadline:
 * core's `admitCall` takes the circuit's permit, a token and a slot in that
 * order, so an open circuit refuses before a token or a slot is spent and a
 * wait in the queue counts against the call's deadline (the wait ends with
 * `DEADLINE_EXCEEDED` when the deadline passes). A refused call never opens
 * a stream: an open circuit ends it with `UNAVAILABLE` (`cause`: the
 * `CircuitOpenError`), a rate limit, an adaptive limit or a full queue with
 * `RESOURCE_EXHAUSTED` (`cause`: the core error). A call counts once for its
 * circuit and holds one token and one slot whatever its attempts (this stage
 * sits outside them); a half-open probe is marked so it makes one attempt.
 * @internal
 */
export function admissionStage(parts: AdmissionParts): Stage {
  return {
    intercept(callOptions, chain, index, final) {
      const admission = admitGrpcCall(
        parts,
        callOptions.method_definition.path,
        (callOptions as { criticality?: unknown }).criticality,
      );
      if (!admission.admitted) {
        return new RefusedCall(
          statusWithCause(admission.code, admission.error.message, admission.error),
        );
      }
      const ticket = new Ticket(parts, admission.method, admission.permit, admission.limit);
      // A probe is never retried below: one attempt, whose failure re-opens the circuit.
      const below = isProbePermit(admission.permit) ? markProbe(callOptions) : callOptions;
      if (admission.slot === 'queue') return queued(ticket, below, chain, index, final);
      ticket.slot = admission.slot === 'taken' ? 'taken' : 'none';
      return ticket.open(below, chain, index, final);
    },
  };
}

/**
 * What one admitted call holds — the circuit's permit, the adaptive limit's
 * slot, the pool's slot — given back once, when the call's status arrives
 * (or at once, when the call never opens).
 */
class Ticket {
  /** How the call holds its pool slot: `'taken'` gives it back, `'queued'` ends the pool's task. */
  slot: 'none' | 'taken' | 'queued' = 'none';
  /** Ends the pool task of a queued call, which holds the slot until then. */
  endTask: (() => void) | undefined = undefined;
  private readonly startedAt: number;

  constructor(
    readonly parts: AdmissionParts,
    private readonly method: GrpcMethodCircuit | undefined,
    private readonly permit: number,
    private readonly limit: LimitPermit | undefined,
  ) {
    this.startedAt = method === undefined ? 0 : (parts.circuits as GrpcCircuits).clock();
  }

  /** Opens the call below; a stage below that throws gives everything back and ends it `CANCELLED`. */
  open(
    options: InterceptorOptions,
    chain: StageChain,
    index: number,
    final: Parameters<Stage['intercept']>[3],
  ): CallLink {
    let call: CallLink;
    try {
      call = chain.next(options, index, final);
    } catch (error) {
      this.giveBack({ ok: false, outcome: 'neutral', limit: 'ignored' });
      return new RefusedCall(statusWithCause(Status.CANCELLED, 'Cancelled while admitted', error));
    }
    return new ObservedCall(call, settler, this, this.permit, this.startedAt);
  }

  /** The call ended with `status`: each part hears what it counts. */
  settled(status: StatusObject, cancelledByCaller: boolean): void {
    const method = this.method;
    const circuits = this.parts.circuits;
    // Success first: reading trailers would cost a closure on every call.
    const outcome: CallOutcome =
      method === undefined || status.code === Status.OK
        ? 'success'
        : (circuits as GrpcCircuits).outcomeOf(
            method.path,
            status.code,
            status.details,
            trailerGetter(status.metadata),
            cancelledByCaller,
            isProbePermit(this.permit),
          );
    // A slot counts a call completed whatever its status (as a queued call's task that resolves).
    this.giveBack({
      ok: true,
      outcome,
      limit: grpcLimitOutcome(status.code, cancelledByCaller),
    });
  }

  /** Gives back the slots, then the circuit's permit (the call was never sent: `neutral`). */
  giveBack(end: {
    ok: boolean;
    outcome: CallOutcome;
    limit: Parameters<LimitPermit['release']>[0];
  }): void {
    if (this.slot === 'taken') (this.parts.pool as Pool).give(end.ok);
    else if (this.slot === 'queued') this.endTask?.();
    this.slot = 'none';
    this.limit?.release(end.limit);
    const method = this.method;
    if (method === undefined || this.permit < 0) return;
    const clock = (this.parts.circuits as GrpcCircuits).clock;
    method.breaker.release(this.permit, {
      outcome: end.outcome,
      durationMs: clock() - this.startedAt,
    });
  }
}

const settler: CallObserver<Ticket> = {
  settle(ticket, _permit, _startedAt, status, cancelledByCaller) {
    ticket.settled(status, cancelledByCaller);
  },
};

/**
 * A call that waits for a pool slot. It leaves the queue when its caller
 * cancels or its deadline passes (`DEADLINE_EXCEEDED`, never sent); a full
 * queue refuses it with `RESOURCE_EXHAUSTED`.
 */
function queued(
  ticket: Ticket,
  options: InterceptorOptions,
  chain: StageChain,
  index: number,
  final: Parameters<Stage['intercept']>[3],
): DeferredCall {
  const { pool, clock, sleep } = ticket.parts;
  const deferred = new DeferredCall();
  const leave = new AbortController();
  const deadlineMs = deadlineOf(options);
  let expired = false;
  if (deadlineMs !== Number.POSITIVE_INFINITY) {
    sleep(Math.max(deadlineMs - clock(), 0), leave.signal).then(
      () => {
        expired = true;
        leave.abort();
      },
      // Aborted: the call started or left the queue first.
      () => {},
    );
  }
  (pool as Pool)
    .run(
      () =>
        new Promise<void>((endTask) => {
          leave.abort();
          if (deferred.cancelled !== undefined) {
            deferred.refuse(deferred.cancelled);
            endTask();
            return;
          }
          ticket.slot = 'queued';
          ticket.endTask = endTask;
          deferred.open(ticket.open(options, chain, index, final));
        }),
      { signal: leave.signal },
    )
    .catch((error: unknown) => {
      leave.abort();
      ticket.giveBack({ ok: false, outcome: 'neutral', limit: 'ignored' });
      if (isQueueFullError(error)) {
        deferred.refuse(statusWithCause(Status.RESOURCE_EXHAUSTED, error.message, error));
      } else if (expired) {
        // The deadline stage above gives the status its `DeadlineExceededError`.
        deferred.refuse({
          code: Status.DEADLINE_EXCEEDED,
          details: 'Deadline exceeded while queued for a concurrency slot',
          metadata: new Metadata(),
        });
      } else {
        deferred.refuse(
          deferred.cancelled ?? statusWithCause(Status.CANCELLED, 'Cancelled while queued', error),
        );
      }
    });
  const cancel = deferred.cancelWithStatus.bind(deferred);
  deferred.cancelWithStatus = (code, details) => {
    cancel(code, details);
    if (deferred.cancelled !== undefined) leave.abort();
  };
  return deferred;
}

/** The call's deadline in epoch ms (`Infinity` for none). */
function deadlineOf(options: InterceptorOptions): number {
  const deadline = options.deadline;
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  return deadline instanceof Date ? deadline.getTime() : deadline;
}
