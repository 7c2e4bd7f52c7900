import type { CircuitBreaker } from '../breaker/types.js';
import type { AdaptiveLimiter } from '../limit/adaptive-limiter.js';
import type { Clock } from '../time/clock.js';
import { STOP_BUDGET, STOP_DEADLINE } from './engine.js';

/**
 * What a call is, in bounded attributes only: a stable object per stack (or
 * per method), never built per call, and never holding payloads, metadata
 * values, call ids or limiter keys.
 */
export interface TelemetryTarget {
  /** `rpc.system`: `'grpc'` or `'trpc'`; `undefined` for `protect` and the router. */
  readonly system?: string | undefined;
  /** `rpc.service` (gRPC: the package-qualified service). */
  readonly service?: string | undefined;
  /** `rpc.method` (gRPC: the method name; tRPC: the procedure path). */
  readonly method?: string | undefined;
  /** `server.address`, when the adapter knows it at construction. */
  readonly serverAddress?: string | undefined;
  /** `breakwater.name`: the stack's name (`protect`'s `name`, the router, a provider id). */
  readonly name?: string | undefined;
  /** `breakwater.provider`: the router's provider a per-provider instrument (its adaptive limit) belongs to. */
  readonly provider?: string | undefined;
}

/** How one attempt ended. */
export type TelemetryAttemptOutcome = 'success' | 'failure' | 'timeout';

/** How one call ended. */
export type TelemetryCallOutcome = 'success' | 'failure' | 'refused' | 'cancelled';

/**
 * Why a call (or a retry, hedge or failover of it) was refused before it ran:
 * `'circuit-open'`, `'rate-limited'`, `'queue-full'`, `'concurrency-limit'`
 * (an adaptive concurrency limit), `'throttled'` (adaptive
 * throttle), `'budget-exhausted'` (the retry budget refused a retry, hedge or
 * failover) or `'deadline-expired'` (a retry could not start before the call's
 * deadline, or a router request arrived after its `deadlineAt`).
 */
export type TelemetryRefusal =
  | 'circuit-open'
  | 'rate-limited'
  | 'queue-full'
  | 'concurrency-limit'
  | 'throttled'
  | 'budget-exhausted'
  | 'deadline-expired';

/**
 * What one call reports, from start to end. Every method is optional and
 * told synchronously by the driver running the call; a throwing method is
 * ignored (it never breaks the call). `errorType` is always a bounded name
 * (an error's `name` or a status code's name), never a message. `now` is the
 * driver's own reading of the stack's telemetry clock (see
 * {@link Telemetry.startCall}): durations are differences of these readings,
 * so a telemetry never reads a clock of its own.
 */
export interface CallTelemetry {
  /**
   * Attempt `attempt` (1 = the first) starts at `now`. For a telemetry with
   * {@link Telemetry.firstAttemptAtStart}, attempt 1 starts at the call's
   * start (`startCall`'s `now`) unless this says otherwise: drivers tell
   * `attemptStart(1, now)` only when attempt 1 starts on a later reading (the
   * call waited in a queue, or an attempt driver read its own).
   */
  attemptStart?(attempt: number, now: number): void;
  /** Attempt `attempt` ended at `now`. */
  attemptEnd?(
    attempt: number,
    outcome: TelemetryAttemptOutcome,
    errorType: string | undefined,
    now: number,
  ): void;
  /**
   * Attempt 1 succeeded at `now`, and so the call ended with success at
   * `now`: the usual call, told in one hook instead of `attemptEnd(1,
   * 'success', undefined, now)` then `end('success', 1, undefined, now)`.
   * Drivers tell it whenever that is what happened, from the same reading,
   * and then tell neither of those two; a telemetry without it hears those
   * two instead (the guard calls them), so it means exactly what they mean.
   */
  firstAttemptSucceeded?(now: number): void;
  /** Attempt `attempt` failed with `reason` and the next one starts after `delayMs`. */
  retry?(attempt: number, delayMs: number, reason: string): void;
  /** A hedged attempt, number `attempt`, was sent while earlier ones still run. */
  hedge?(attempt: number): void;
  /** The call was answered by attempt `attempt`, a hedge (`attempt > 1` of a hedged call). */
  hedgeWon?(attempt: number): void;
  /**
   * The router leaves provider `from` (which failed with `reason`) for provider `to`
   * (`undefined` when no other could be tried), told when `to` is picked.
   */
  failover?(from: string, reason: string, to: string | undefined): void;
  /** The call, or a retry, hedge or failover of it, was refused for `reason`. */
  refused?(reason: TelemetryRefusal): void;
  /** A deadline passed: of one attempt (`'attempt'`) or of the whole call (`'call'`). */
  deadlineExceeded?(scope: 'attempt' | 'call'): void;
  /** The call settled at `now` after `attempts` attempts (0 when refused before the first). */
  end?(
    outcome: TelemetryCallOutcome,
    attempts: number,
    errorType: string | undefined,
    now: number,
  ): void;
}

/**
 * The one telemetry hook of Breakwater: the `telemetry` option of
 * `ResilienceOptions` (so of `protect`, the router and the adapters'
 * `resilience*()`). Core calls it, and has no OpenTelemetry dependency;
 * `@breakwater/otel`'s `otelTelemetry()` is one implementation. Without the
 * option nothing is called and nothing is allocated for it.
 */
export interface Telemetry {
  /**
   * A call of `target` starts at `now`; returns what hears the rest of it, or
   * `undefined` to skip this call. `now` and every later reading of the call
   * are in ms on the stack's telemetry clock: its `clock` option when one is
   * given (a manual clock in tests gives manual-clock durations), else
   * `performance.now()` (monotonic, sub-millisecond), which is also what the
   * host timer's deadlines read, so core hands the same reading to both.
   */
  startCall(target: TelemetryTarget, now: number): CallTelemetry | undefined;
  /** Told once per circuit breaker of the stack (at construction, or when a method's is created). */
  circuit?(breaker: CircuitBreaker, target: TelemetryTarget): void;
  /** Told once per adaptive concurrency limiter of the stack (one per method or provider, when it is created), to read its limit, in-flight calls and refusals. */
  concurrencyLimit?(limiter: AdaptiveLimiter, target: TelemetryTarget): void;
  /** Told once by a router: its provider ids, and `healthy(i)` reads whether `ids[i]` is healthy now (its circuit and health entry not open). */
  providers?(
    ids: readonly string[],
    healthy: (index: number) => boolean,
    target: TelemetryTarget,
  ): void;
  /**
   * `true`: attempt 1 starts at the call's start unless `attemptStart(1,
   * now)` says otherwise, so drivers skip that hook when attempt 1 starts on
   * the call's start reading (the usual call: one hook less). A telemetry
   * that needs the hook then anyway (e.g. to open an attempt span at the
   * attempt's real start) leaves it `false`: every attempt's start is told.
   * Read once, when the stack is built. Defaults to `false`.
   */
  readonly firstAttemptAtStart?: boolean;
  /**
   * `true` promises that no method here or on what `startCall` returns ever
   * throws, and that every `CallTelemetry` method is there: core then calls
   * it without its guard (one object less per call). Defaults to `false`.
   */
  readonly unguarded?: boolean;
}

/**
 * `telemetry` reduced to its calls, for a second router over the same targets
 * (an adapter's router for calls not safe to hedge, or one built only to check
 * options): the targets' health and the circuits are told by the first router
 * alone, so a gauge never hears two routers under one target's attributes.
 * Anything that is not a valid telemetry is returned as is, for the router to
 * reject with its usual message.
 * @internal
 */
export function callsOnlyTelemetry(telemetry: Telemetry): Telemetry {
  const t = telemetry as Partial<Telemetry> | null;
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.startCall !== 'function' ||
    (t.circuit !== undefined && typeof t.circuit !== 'function') ||
    (t.providers !== undefined && typeof t.providers !== 'function')
  ) {
    return telemetry;
  }
  return {
    startCall: (target, now) => telemetry.startCall(target, now),
    ...(telemetry.unguarded === undefined ? {} : { unguarded: telemetry.unguarded }),
    ...(telemetry.firstAttemptAtStart === undefined
      ? {}
      : { firstAttemptAtStart: telemetry.firstAttemptAtStart }),
  };
}

/** Calls the user's call telemetry, swallowing what it throws. @internal */
class GuardedCall implements CallTelemetry {
  constructor(readonly inner: CallTelemetry) {}
  attemptStart(attempt: number, now: number): void {
    try {
      this.inner.attemptStart?.(attempt, now);
    } catch {
      // An observer never breaks the call it observes.
    }
  }
  attemptEnd(
    attempt: number,
    outcome: TelemetryAttemptOutcome,
    errorType: string | undefined,
    now: number,
  ): void {
    try {
      this.inner.attemptEnd?.(attempt, outcome, errorType, now);
    } catch {
      // As above.
    }
  }
  firstAttemptSucceeded(now: number): void {
    const inner = this.inner;
    if (inner.firstAttemptSucceeded !== undefined) {
      try {
        inner.firstAttemptSucceeded(now);
      } catch {
        // As above.
      }
      return;
    }
    // A telemetry without the fused hook hears what it stands for.
    this.attemptEnd(1, 'success', undefined, now);
    this.end('success', 1, undefined, now);
  }
  retry(attempt: number, delayMs: number, reason: string): void {
    try {
      this.inner.retry?.(attempt, delayMs, reason);
    } catch {
      // As above.
    }
  }
  hedge(attempt: number): void {
    try {
      this.inner.hedge?.(attempt);
    } catch {
      // As above.
    }
  }
  hedgeWon(attempt: number): void {
    try {
      this.inner.hedgeWon?.(attempt);
    } catch {
      // As above.
    }
  }
  failover(from: string, reason: string, to: string | undefined): void {
    try {
      this.inner.failover?.(from, reason, to);
    } catch {
      // As above.
    }
  }
  refused(reason: TelemetryRefusal): void {
    try {
      this.inner.refused?.(reason);
    } catch {
      // As above.
    }
  }
  deadlineExceeded(scope: 'attempt' | 'call'): void {
    try {
      this.inner.deadlineExceeded?.(scope);
    } catch {
      // As above.
    }
  }
  end(
    outcome: TelemetryCallOutcome,
    attempts: number,
    errorType: string | undefined,
    now: number,
  ): void {
    try {
      this.inner.end?.(outcome, attempts, errorType, now);
    } catch {
      // As above.
    }
  }
}

/** Every method of {@link CallTelemetry}, present and never throwing. @internal */
export type SafeCallTelemetry = Required<CallTelemetry>;

/** A {@link Telemetry} whose calls never throw. @internal */
export interface SafeTelemetry {
  /** The stack's telemetry clock: every `now` handed to the telemetry is read on it. */
  readonly clock: Clock;
  /**
   * {@link Telemetry.firstAttemptAtStart} (`false` when not `true`): drivers
   * tell `attemptStart(1, now)` only when this is `false` or attempt 1 starts
   * on a later reading than the call's start.
   */
  readonly firstAttemptAtStart: boolean;
  startCall(target: TelemetryTarget, now: number): SafeCallTelemetry | undefined;
  circuit(breaker: CircuitBreaker, target: TelemetryTarget): void;
  concurrencyLimit(limiter: AdaptiveLimiter, target: TelemetryTarget): void;
  providers(
    ids: readonly string[],
    healthy: (index: number) => boolean,
    target: TelemetryTarget,
  ): void;
}

/**
 * Wraps the user's telemetry once, at construction, so drivers can call it
 * without guards: every method is present and nothing it throws escapes.
 * `clock` is the stack's telemetry clock (see {@link Telemetry.startCall}).
 * @internal
 */
export function guardTelemetry(telemetry: Telemetry, clock: Clock): SafeTelemetry {
  const firstAttemptAtStart = telemetry.firstAttemptAtStart === true;
  if (telemetry.unguarded === true) {
    return {
      clock,
      firstAttemptAtStart,
      startCall: (target, now) => telemetry.startCall(target, now) as SafeCallTelemetry | undefined,
      circuit: (breaker, target) => telemetry.circuit?.(breaker, target),
      concurrencyLimit: (limiter, target) => telemetry.concurrencyLimit?.(limiter, target),
      providers: (ids, healthy, target) => telemetry.providers?.(ids, healthy, target),
    };
  }
  return {
    clock,
    firstAttemptAtStart,
    startCall(target, now) {
      let inner: CallTelemetry | undefined;
      try {
        inner = telemetry.startCall(target, now);
      } catch {
        return undefined;
      }
      if (inner === undefined || inner === null) return undefined;
      return new GuardedCall(inner);
    },
    circuit(breaker, target) {
      try {
        telemetry.circuit?.(breaker, target);
      } catch {
        // As above.
      }
    },
    concurrencyLimit(limiter, target) {
      try {
        telemetry.concurrencyLimit?.(limiter, target);
      } catch {
        // As above.
      }
    },
    providers(ids, healthy, target) {
      try {
        telemetry.providers?.(ids, healthy, target);
      } catch {
        // As above.
      }
    },
  };
}

/** The bounded name of an error: its `name`, or its type when it is not an `Error`. @internal */
export function errorTypeOf(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

const REFUSALS: Readonly<Record<string, TelemetryRefusal>> = {
  CircuitOpenError: 'circuit-open',
  RateLimitError: 'rate-limited',
  QueueFullError: 'queue-full',
  ConcurrencyLimitError: 'concurrency-limit',
};

/** The refusal a Breakwater error stands for (circuit open, rate limited, queue full), if any. @internal */
export function refusalOf(error: unknown): TelemetryRefusal | undefined {
  return error instanceof Error ? REFUSALS[error.name] : undefined;
}

/** The refusal an engine `STOP_*` code stands for: the budget or the deadline refused a retry. @internal */
export function stopRefusal(code: number): TelemetryRefusal | undefined {
  return code === STOP_BUDGET
    ? 'budget-exhausted'
    : code === STOP_DEADLINE
      ? 'deadline-expired'
      : undefined;
}

/**
 * One call's telemetry as an adapter's stages share it: the outermost stage
 * starts it and hands it down (under {@link TELEMETRY_SCOPE} in the call's
 * options); the attempt driver, when there is one, marks it `driven` and
 * counts the attempts it reports.
 * @internal
 */
export class TelemetryScope {
  /** An attempt driver reports this call's attempts. */
  driven = false;
  /** Attempts the driver started. */
  attempts = 0;
  /** Why a stage below refused the call before its first attempt, when its error does not say. */
  refusal: TelemetryRefusal | undefined = undefined;
  constructor(
    readonly tel: SafeCallTelemetry,
    /** The stack's telemetry clock, read for each `now` the stages hand to `tel`. */
    readonly clock: Clock,
  ) {}
}

/** The key of a call's {@link TelemetryScope} in its options object. @internal */
export const TELEMETRY_SCOPE: unique symbol = Symbol.for('breakwater.telemetry');

/** The {@link TelemetryScope} in call options `options`, if the stack has telemetry. @internal */
export function telemetryScopeOf(options: object): TelemetryScope | undefined {
  return (options as { [TELEMETRY_SCOPE]?: TelemetryScope })[TELEMETRY_SCOPE];
}

/** The {@link TelemetryScope} in `options`, marked `driven`: the attempt driver calling this reports the attempts. @internal */
export function claimTelemetry(options: object): TelemetryScope | undefined {
  const scope = telemetryScopeOf(options);
  if (scope !== undefined) scope.driven = true;
  return scope;
}
