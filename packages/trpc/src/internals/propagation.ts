import { type ErrorVerdict, PROPAGATION_HEADERS } from '@breakwater/core';
import { inheritInbound, type PropagatePlan, timeoutHeaderMs } from '@breakwater/core/internal';
import { systemClock } from '@breakwater/core/time';
import type { Operation } from '@trpc/client';
import type { Observer } from '@trpc/server/observable';

/** Where the stack leaves, per attempt, what `breakwaterHeaders` sends. @internal */
export const OUTBOUND = Symbol.for('@breakwater/trpc/outbound');

/** What one attempt tells the server it calls. @internal */
export interface Outbound {
  /** Wall-clock ms (epoch ms, as `systemClock` reads) of the attempt's deadline; `Infinity` for none. */
  deadline: number;
  /** 1 for the first attempt. */
  attempt: number;
  criticality: string | undefined;
}

type OutboundContext = {
  [OUTBOUND]?: Outbound;
  [CRITICALITY]?: string;
  propagate?: false;
  timeoutMs?: number;
};

/** The inbound criticality, kept on the operation for every attempt's headers. */
const CRITICALITY = Symbol.for('@breakwater/trpc/criticality');

/** The inbound criticality an operation carries, if any. @internal */
export function outboundCriticality(op: Operation): string | undefined {
  return (op.context as OutboundContext)[CRITICALITY];
}

/** Attempt `attempt` of `op`, carrying what `breakwaterHeaders` sends. @internal */
export function withOutbound(op: Operation, outbound: Outbound): Operation {
  const context: OutboundContext = Object.assign({}, op.context);
  context[OUTBOUND] = outbound;
  return Object.assign({}, op, { context });
}

/**
 * The headers that carry an attempt's deadline, attempt number and
 * criticality to a tRPC server bound with `breakwaterContext`: pass it as the
 * `headers` of `httpLink` or `httpBatchLink` (a batch sends its earliest
 * deadline and latest attempt).
 * @example
 * httpBatchLink({ url, headers: breakwaterHeaders })
 */
export function breakwaterHeaders(
  opts: { op: Operation } | { opList: readonly Operation[] },
): Record<string, string> {
  const ops = 'op' in opts ? [opts.op] : opts.opList;
  let deadline = Number.POSITIVE_INFINITY;
  let attempt = 0;
  let criticality: string | undefined;
  for (const op of ops) {
    const outbound = (op.context as OutboundContext)[OUTBOUND];
    if (outbound === undefined) continue;
    deadline = Math.min(deadline, outbound.deadline);
    attempt = Math.max(attempt, outbound.attempt);
    criticality ??= outbound.criticality;
  }
  const { http } = PROPAGATION_HEADERS;
  const headers: Record<string, string> = {};
  // Time left as the request leaves, not as the attempt started: a batch or a slow connect waits in between.
  if (deadline !== Number.POSITIVE_INFINITY) {
    headers[http.timeout] = timeoutHeaderMs(deadline - systemClock());
  }
  if (attempt > 0) headers[http.attempt] = String(attempt);
  if (criticality !== undefined) headers[http.criticality] = criticality;
  return headers;
}

/** A call as the stack runs it once inheritance is applied. @internal */
export interface InheritedCall<T> {
  op: Operation;
  observer: Partial<Observer<T, unknown>>;
  /** The inherited deadline has passed: the call must not start. */
  expired: boolean;
}

/**
 * `op` and `observer` inside a bound server handler: the call's deadline is
 * at most the inbound deadline less the margin, it aborts with the inbound
 * call, and an overloaded end makes the server answer don't-retry.
 * @internal
 */
export function inheritCall<T>(
  plan: PropagatePlan | undefined,
  timeoutMs: number,
  classify: (error: unknown, op: Operation) => ErrorVerdict,
  op: Operation,
  observer: Partial<Observer<T, unknown>>,
): InheritedCall<T> | undefined {
  const context = op.context as OutboundContext;
  const inherited = inheritInbound(plan, context.propagate);
  if (inherited === undefined) return undefined;
  const remaining = inherited.remainingMs();
  const linked = inherited.link(op.signal ?? undefined);
  const own = context.timeoutMs ?? timeoutMs;
  const down: OutboundContext = Object.assign({}, op.context, {
    timeoutMs: Math.min(own, remaining),
  });
  if (inherited.inbound.criticality !== undefined) {
    down[CRITICALITY] = inherited.inbound.criticality;
  }
  return {
    op: Object.assign({}, op, { signal: linked.signal, context: down }),
    expired: remaining <= 0,
    observer: {
      next: (value) => observer.next?.(value),
      error(error) {
        linked.release();
        inherited.failed(error, classify(error, op));
        observer.error?.(error);
      },
      complete() {
        linked.release();
        inherited.succeeded();
        observer.complete?.();
      },
    },
  };
}
