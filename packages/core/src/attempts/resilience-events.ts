import type { CircuitBreaker, CircuitState } from '../breaker/types.js';
import { notify } from '../internal/notify.js';
import type {
  SafeCallTelemetry,
  SafeTelemetry,
  Telemetry,
  TelemetryRefusal,
  TelemetryTarget,
} from './telemetry.js';

/** What every {@link ResilienceEvent} carries: where it happened, where known. */
export interface ResilienceEventSource {
  /** The method: gRPC `/package.Service/Method`, the tRPC procedure path; `undefined` for `protect` and the router. */
  readonly method: string | undefined;
  /** The target: a router provider's id (a routing channel's address), a server address, else the stack's `name`. */
  readonly target: string | undefined;
}

/** An attempt failed and another follows after `delayMs`. */
export interface ResilienceRetryEvent extends ResilienceEventSource {
  readonly kind: 'retry';
  /** The attempt that failed, 1-based. */
  readonly attempt: number;
  readonly delayMs: number;
  /** `name` of the error (or status) the attempt failed with. */
  readonly reason: string;
}

/** A hedged attempt was sent while earlier ones still run. */
export interface ResilienceHedgeEvent extends ResilienceEventSource {
  readonly kind: 'hedge';
  /** The hedge's attempt number (2 = the first hedge). */
  readonly attempt: number;
}

/** A router left provider `from` (which failed with `reason`) for provider `to`. */
export interface ResilienceFailoverEvent extends ResilienceEventSource {
  readonly kind: 'failover';
  readonly from: string;
  /** The provider tried next; `undefined` when none could be (every other one was skipped). */
  readonly to: string | undefined;
  readonly reason: string;
}

/** The call, or a retry, hedge or failover of it, was refused before it was sent. */
export interface ResilienceRefusalEvent extends ResilienceEventSource {
  readonly kind: 'refused';
  readonly reason: TelemetryRefusal;
}

/** A circuit changed state. */
export interface ResilienceCircuitEvent extends ResilienceEventSource {
  readonly kind: 'circuit';
  readonly from: CircuitState;
  readonly to: CircuitState;
  /** How long it stays open, in ms, when it opened. */
  readonly openDurationMs: number | undefined;
}

/** One thing a resilience stack did: what `onEvent` hears. */
export type ResilienceEvent =
  | ResilienceRetryEvent
  | ResilienceHedgeEvent
  | ResilienceFailoverEvent
  | ResilienceRefusalEvent
  | ResilienceCircuitEvent;

/** The `onEvent` option: hears every {@link ResilienceEvent}; what it throws is dropped. */
export type ResilienceListener = (event: ResilienceEvent) => void;

function sourceOf(t: TelemetryTarget): ResilienceEventSource {
  const method =
    t.system === 'grpc' && t.service !== undefined && t.method !== undefined
      ? `/${t.service}/${t.method}`
      : t.method;
  return { method, target: t.serverAddress ?? t.name };
}

/**
 * The breakers each listener already watches: two routers over the same circuits (an
 * adapter's twin routers) or two stacks sharing a breaker report each change once.
 */
const watched = new WeakMap<ResilienceListener, WeakSet<CircuitBreaker>>();

const ignore = (): void => {};

/**
 * `onEvent` as a telemetry: the telemetry hooks are where every decision is told, so
 * events come from the one place each decision is made. Calls of one target share one
 * stateless object.
 * @internal
 */
export function eventTelemetry(listener: ResilienceListener): Telemetry {
  const calls = new WeakMap<TelemetryTarget, SafeCallTelemetry>();
  const callsOf = (target: TelemetryTarget): SafeCallTelemetry => {
    let call = calls.get(target);
    if (call !== undefined) return call;
    const source = sourceOf(target);
    call = {
      attemptStart: ignore,
      attemptEnd: ignore,
      firstAttemptSucceeded: ignore,
      hedgeWon: ignore,
      deadlineExceeded: ignore,
      end: ignore,
      retry: (attempt, delayMs, reason) =>
        notify(listener, { kind: 'retry', ...source, attempt, delayMs, reason }),
      hedge: (attempt) => notify(listener, { kind: 'hedge', ...source, attempt }),
      failover: (from, reason, to) =>
        notify(listener, { kind: 'failover', ...source, from, to, reason }),
      refused: (reason) => notify(listener, { kind: 'refused', ...source, reason }),
    };
    calls.set(target, call);
    return call;
  };
  return {
    unguarded: true,
    firstAttemptAtStart: true,
    startCall: callsOf,
    circuit(breaker, target) {
      const breakers = watched.get(listener) ?? new WeakSet<CircuitBreaker>();
      watched.set(listener, breakers);
      if (breakers.has(breaker)) return;
      breakers.add(breaker);
      const source = sourceOf(target);
      breaker.onStateChange((change) =>
        notify(listener, {
          kind: 'circuit',
          ...source,
          from: change.from,
          to: change.to,
          openDurationMs: change.openDurationMs,
        }),
      );
    },
  };
}

/**
 * Both telemetries, each told everything: the `telemetry` option and `onEvent` given
 * together. `first`'s `firstAttemptAtStart` holds (`second` ignores attempt starts).
 * @internal
 */
export function bothTelemetries(first: SafeTelemetry, second: SafeTelemetry): SafeTelemetry {
  return {
    clock: first.clock,
    firstAttemptAtStart: first.firstAttemptAtStart,
    startCall(target, now) {
      const a = first.startCall(target, now);
      const b = second.startCall(target, now);
      if (a === undefined || b === undefined) return a ?? b;
      const both = [a, b];
      return {
        attemptStart: (attempt, at) => a.attemptStart(attempt, at),
        attemptEnd: (attempt, outcome, type, at) => a.attemptEnd(attempt, outcome, type, at),
        firstAttemptSucceeded: (at) => a.firstAttemptSucceeded(at),
        hedgeWon: (attempt) => a.hedgeWon(attempt),
        deadlineExceeded: (scope) => a.deadlineExceeded(scope),
        end: (outcome, attempts, type, at) => a.end(outcome, attempts, type, at),
        retry: (attempt, delayMs, reason) => {
          for (const t of both) t.retry(attempt, delayMs, reason);
        },
        hedge: (attempt) => {
          for (const t of both) t.hedge(attempt);
        },
        failover: (from, reason, to) => {
          for (const t of both) t.failover(from, reason, to);
        },
        refused: (reason) => {
          for (const t of both) t.refused(reason);
        },
      };
    },
    circuit(breaker, target) {
      first.circuit(breaker, target);
      second.circuit(breaker, target);
    },
    concurrencyLimit: (limiter, target) => first.concurrencyLimit(limiter, target),
    providers: (ids, healthy, target) => first.providers(ids, healthy, target),
  };
}
