import {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type Criticality,
  createPool,
  type MethodOptions,
  type ResilienceOptions,
  type ResilienceWarning,
  STANDARD_RESILIENCE,
} from '@breakwater/core';
import type { RetryPolicyOptions } from '@breakwater/core/adapter';
import {
  compileSelector,
  createGrpcCircuits,
  createGrpcStatusClassifier,
  type GrpcCircuits,
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  type MethodSelector,
} from '@breakwater/core/grpc';
import {
  GRPC_METHOD_SELECTORS,
  grpcAdaptiveLimiters,
  optionPath,
  optionTypeError,
  type ResiliencePlan,
  reportWarning,
  resolveMethods,
  resolveResilience,
} from '@breakwater/core/internal';
import { type Clock, type Sleep, systemClock, systemSleep } from '@breakwater/core/time';
import type { Pool } from '@breakwater/core/types';
import type { CallOptions, Interceptor, InterceptorOptions, NextCall } from '@grpc/grpc-js';
import { admissionStage } from './internals/admission-stage.js';
import { attemptStage } from './internals/attempt-stage.js';
import { deadlineStage } from './internals/deadline-stage.js';
import { propagationStage } from './internals/propagation-stage.js';
import { type Stage, stageInterceptor } from './internals/stage.js';
import { telemetryStage } from './internals/telemetry-stage.js';
import { timeLeftStage } from './internals/time-left-stage.js';

/**
 * Options of {@link resilienceInterceptor}: core's `ResilienceOptions` (the
 * same names as `protect`, `resilienceMiddleware` and `resilienceLink`; see
 * the table in `@breakwater/core`'s README) plus the gRPC-specific keys.
 * A part left out takes the standard stack's default; `false` turns it off.
 */
export interface ResilienceInterceptorOptions extends Omit<ResilienceOptions, 'retry'> {
  /** Retries of failed attempts; `onRetry` hears `{ path, attempt (the failed one), delayMs, code }`. Defaults to 3 attempts with the default backoff. */
  retry?:
    | (Omit<RetryPolicyOptions, 'onRetry'> & { onRetry?: (event: GrpcRetryEvent) => void })
    | false;
  /** Methods safe to repeat (see `idempotentMethods`): only they are retried or hedged, except calls that provably never left. Defaults to none. */
  idempotent?: MethodSelector;
  /** Status → verdict for retries, hedges and the circuit. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Told once, at construction, of a configuration that probably does not do what was meant; a throwing listener is ignored. Defaults to a Node process warning, printed once per process. */
  onWarning?: (warning: ResilienceWarning) => void;
  /**
   * Settings per method (`'/pkg.Service/Method'`) or service (`'pkg.Service'`):
   * a call takes the most specific entry, merged over these options (`retry`,
   * `hedge`, `circuit` field by field). Budget, rate limit and bulkhead stay the client's. Defaults to none.
   * @example
   * methods: { '/shop.Catalog/Export': { timeoutMs: 60_000, retry: false } }
   */
  methods?: Readonly<Record<string, MethodOptions>>;
}

/**
 * grpc-js `CallOptions` with the per-call options the interceptor reads.
 * @example
 * const options: ResilienceCallOptions = { criticality: 'sheddable' };
 * client.sayHello(request, new Metadata(), options, callback);
 */
export interface ResilienceCallOptions extends CallOptions {
  /** How much the call matters under `concurrency.adaptive`: the lowest tier is refused first. Defaults to `'default'`. */
  criticality?: Criticality;
}

/** A resilience interceptor that can also show its circuits. */
export interface ResilienceInterceptor extends Interceptor {
  /** The circuit guarding method `path` (created on first use), or `undefined` with `circuit: false`. */
  circuitFor(path: string): CircuitBreaker | undefined;
}

/**
 * Chains interceptors into one, outermost first (the first sees the call first).
 * @example
 * const stack = composeInterceptors([resilienceInterceptor({ idempotent }), loggingInterceptor]);
 */
export function composeInterceptors(interceptors: readonly Interceptor[]): Interceptor {
  const list = interceptors.slice();
  if (list.length === 1) return list[0] as Interceptor;
  return (options, nextCall) => {
    let next: NextCall = nextCall;
    for (let i = list.length - 1; i > 0; i--) next = link(list[i] as Interceptor, next);
    return (list[0] as Interceptor)(options, next);
  };
}

// A factory, not an inline arrow assigned to a name: transpilers that keep
// function names (esbuild keepNames, as tsx runs) would rename it per call.
function link(interceptor: Interceptor, below: NextCall): NextCall {
  return (o: InterceptorOptions) => interceptor(o, below);
}

/**
 * One interceptor with the whole Breakwater stack. With no options it runs
 * the standard stack (`STANDARD_RESILIENCE`: a 30 s call deadline, 10 s per
 * attempt, 3 attempts with jittered exponential backoff under a retry budget,
 * a failure-rate circuit per method, 1 000 calls at once); each part is
 * replaced by its option or turned off with `false`. Stages, outermost first:
 *
 * 0. `propagate` — inside a bound server handler (`breakwaterServerInterceptor`), the
 *    inbound deadline less the margin when earlier, and the inbound cancellation;
 * 1. `timeoutMs` — the call deadline, so everything below works within it;
 * 2. admission, in core's one order (`protect`, `resilienceMiddleware` and
 *    `resilienceLink` share it): `circuit` — one breaker per method (or the
 *    one given, shared): an open circuit refuses before any token or slot is
 *    spent; a call counts once, after its retries; then `rateLimit` — one
 *    token per call, not per attempt; then `concurrency` — one slot covers the
 *    call with all its attempts and waits, and a wait in its queue counts
 *    against the deadline (with `adaptive`, one discovered limit per method;
 *    the per-call `criticality` option, like `deadline`, picks which calls it
 *    sheds first);
 * 3. `hedge` or `retry` — attempts on the channel, each under `attemptTimeoutMs`.
 *    Methods `idempotent` selects are hedged when `hedge` is on, else retried;
 *    other methods are retried only when the request provably never left
 *    (no connection, stream refused — grpc-js's own transparent-retry cases).
 *
 * Every retry decision (pushback, backoff, deadline, budget) is the core
 * attempt engine's. grpc-js's own retries would multiply with these: create
 * the channel with `disableGrpcRetries`. Per-call `interceptors` replace the
 * client's, so pass this interceptor there too when you use them.
 * @example
 * const client = new Greeter(address, credentials.createInsecure(), {
 *   ...disableGrpcRetries,
 *   interceptors: [resilienceInterceptor({ idempotent: ['/hello.Greeter/SayHello'] })],
 * });
 */
export function resilienceInterceptor(
  options?: ResilienceInterceptorOptions,
): ResilienceInterceptor {
  const fn = 'resilienceInterceptor';
  const { idempotent, classify, onWarning, methods, ...shared } = (options ??
    {}) as ResilienceInterceptorOptions;
  const plan = resolveResilience(
    fn,
    '',
    // A non-object is handed on as is, so the one check reports it.
    typeof options === 'object' && options !== null ? (shared as ResilienceOptions) : options,
    true,
  );
  return optionPath(
    '',
    () => {
      for (const [name, value] of [
        ['onWarning', onWarning],
        ['classify', classify],
      ] as const) {
        if (value !== undefined && typeof value !== 'function') {
          throw optionTypeError(name, `must be a function, got ${String(value)}`);
        }
      }
      const isSafe = compileSelector('idempotent', idempotent);
      const judge = classify ?? createGrpcStatusClassifier();
      // Every method shares the client's budget, rate limit and bulkhead.
      const table = resolveMethods(fn, methods, GRPC_METHOD_SELECTORS, shared, {
        budget: plan.budget ?? false,
        rateLimit: plan.rateLimit ?? false,
      });
      const slots = plan.concurrency;
      const common: CommonParts = {
        judge,
        clock: shared.clock ?? systemClock,
        sleep: shared.sleep ?? systemSleep,
        pool: slots && createPool({ concurrency: slots.limit, maxQueue: slots.maxQueue }),
        limiters: grpcAdaptiveLimiters(plan, shared.clock),
      };
      const { retry, hedge } = plan;
      // Only a retry or hedge the user asked for is worth a warning: the standard retry
      // covering no method is what a client without `idempotent` wants.
      const asked =
        (retry !== undefined && shared.retry !== undefined) ||
        (hedge !== undefined && shared.hedge !== undefined);
      if (asked && isEmpty(idempotent) && !table.entries.some((e) => e.idempotent === true)) {
        reportWarning(onWarning, {
          code: 'no-idempotent-methods',
          message:
            'resilienceInterceptor: retries are on but `idempotent` selects no method, so only calls that never reached the server are retried; list the methods safe to repeat (e.g. idempotentMethods(packageDefinition)).',
        });
      }
      const client = buildStack(shared, plan, isSafe, common);
      const stacks = new Map(
        table.entries.map((entry) => {
          const own = entry.idempotent;
          const safe = own === undefined ? isSafe : () => own;
          const entryPlan = resolveResilience(
            fn,
            entry.path,
            entry.options as ResilienceOptions,
            true,
          );
          return [
            entry,
            optionPath(entry.path, () => buildStack(entry.options, entryPlan, safe, common)),
          ];
        }),
      );
      const stackFor = (path: string): MethodStack => {
        const entry = table.entryFor(path);
        return (entry && stacks.get(entry)) ?? client;
      };
      const interceptor: Interceptor =
        stacks.size === 0
          ? client.interceptor
          : (o, next) => stackFor(o.method_definition.path).interceptor(o, next);
      return Object.assign(interceptor, {
        circuitFor: (path: string) => stackFor(path).circuits?.circuitFor(path),
      });
    },
    fn,
  );
}

/** What every method's stack shares: the classifier, the clock and sleep, the bulkhead and the adaptive limits. */
interface CommonParts {
  readonly judge: GrpcStatusClassifier;
  readonly clock: Clock;
  /** Waits out a queued call's deadline. */
  readonly sleep: Sleep;
  readonly pool: Pool | undefined;
  readonly limiters: ReturnType<typeof grpcAdaptiveLimiters>;
}

/** The stack of the client's options, or of one `methods` entry merged over them. */
interface MethodStack {
  readonly interceptor: Interceptor;
  readonly circuits: GrpcCircuits | undefined;
}

function buildStack(
  shared: Omit<ResilienceInterceptorOptions, 'idempotent' | 'classify' | 'onWarning' | 'methods'>,
  plan: ResiliencePlan,
  isSafe: (path: string) => boolean,
  { judge, clock, sleep, pool, limiters }: CommonParts,
): MethodStack {
  const stack: Stage[] = [];
  // Before the deadline stage: an inherited deadline earlier than `timeoutMs` is the caller's.
  stack.push(propagationStage(plan.propagate, plan.timeoutMs, judge));
  if (plan.timeoutMs !== Number.POSITIVE_INFINITY) {
    stack.push(deadlineStage(plan.timeoutMs, clock));
  }
  const breaker = plan.circuit;
  // A breaker given is shared by every method; options (or the standard's) make one per method.
  const circuits =
    breaker === undefined
      ? undefined
      : createGrpcCircuits(
          breaker === shared.circuit
            ? { breakerFor: () => breaker, classify: judge, clock }
            : {
                breaker: (shared.circuit ?? STANDARD_RESILIENCE.circuit) as CircuitBreakerOptions,
                classify: judge,
                clock,
              },
        );
  const bucket = plan.rateLimit;
  if (circuits || bucket || pool || limiters) {
    stack.push(admissionStage({ circuits, bucket, pool, limiters, clock, sleep }));
  }
  if (
    plan.retry !== undefined ||
    plan.hedge !== undefined ||
    plan.attemptTimeoutMs !== Number.POSITIVE_INFINITY
  ) {
    stack.push(attemptStage(plan, isSafe, judge, clock));
  }
  // Innermost: each attempt tells a nice-grpc server its time left as it leaves.
  stack.push(timeLeftStage);
  // Outermost, so that it sees refusals and the final status of every call.
  if (plan.telemetry !== undefined) stack.unshift(telemetryStage(plan.telemetry, circuits));
  const interceptor: Interceptor =
    stack.length === 0 ? (o, next) => next(o) as ReturnType<Interceptor> : stageInterceptor(stack);
  return { interceptor, circuits };
}

function isEmpty(selector: MethodSelector | undefined): boolean {
  if (selector === undefined) return true;
  if (typeof selector === 'string' || typeof selector === 'function') return false;
  return (Array.isArray(selector) ? selector.length : (selector as ReadonlySet<string>).size) === 0;
}
