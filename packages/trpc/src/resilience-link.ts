import {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  createCircuitBreaker,
  createPool,
  type MethodOptions,
  type ResilienceOptions,
  type ResilienceWarning,
  STANDARD_RESILIENCE,
  type TelemetryTarget,
} from '@breakwater/core';
import type { RetryPolicyOptions } from '@breakwater/core/adapter';
import {
  checkObject,
  checkOptions,
  createAdaptiveLimiters,
  entryOptions,
  type KnownKeys,
  optionPath,
  optionTypeError,
  PROCEDURE_SELECTORS,
  RESILIENCE_KEYS,
  reportWarning,
  resolveMethods,
  resolveResilience,
  type SafeTelemetry,
} from '@breakwater/core/internal';
import { systemClock } from '@breakwater/core/time';
import type { Operation, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { classifyTRPCError } from './classify.js';
import { type BreakwaterOperationContext, PART_EXTRA_KEYS } from './context.js';
import { type Stack, stackLink, type TRPCClassify } from './internals/call.js';
import type { TRPCRetryEvent } from './retry-link.js';

/** Which operations are safe to repeat: all (`true`), none (`false`), or per operation. */
export type TRPCIdempotent = boolean | ((op: Operation) => boolean);

/** What the tRPC links add to core's `ResilienceOptions`: idempotency and the classifier. */
export interface StackExtras {
  /**
   * Which operations are safe to send more than once (retried, hedged, failed
   * over after a server answered): `true` every operation, mutations
   * included; `false` none; a function decides per operation. Per call,
   * `context.idempotent` overrides it. A request that provably never left
   * (connection refused, refused locally) is repeated whatever this says.
   * Defaults to queries and subscriptions, not mutations.
   */
  idempotent?: TRPCIdempotent | undefined;
  /** Maps a failed attempt's error to a verdict. Defaults to `classifyTRPCError`. */
  classify?: TRPCClassify | undefined;
  /**
   * Told once, at construction, of a configuration that probably does not do
   * what was meant (retries or hedging on with `idempotent: false`); a
   * throwing listener is ignored. Defaults to a Node process warning, printed
   * once per process.
   */
  onWarning?: ((warning: ResilienceWarning) => void) | undefined;
  /** Time source. Defaults to `systemClock`. */
  clock?: ResilienceOptions['clock'] | undefined;
  /** Waits for backoff and hedge delays. Defaults to the host timer. */
  sleep?: ResilienceOptions['sleep'] | undefined;
  /** Randomness for jitter. Defaults to `systemRandom`. */
  random?: ResilienceOptions['random'] | undefined;
}

/**
 * Options of {@link resilienceLink}: core's one `ResilienceOptions` object
 * (each part off with `false`), with `onRetry` hearing tRPC events, plus
 * `idempotent` and `classify`.
 */
export interface ResilienceLinkOptions extends Omit<ResilienceOptions, 'retry'>, StackExtras {
  /**
   * Settings per procedure (`'user.get'`) or router (`'user.*'`, every
   * procedure under it): a call takes the most specific entry (the path, then
   * the longest router prefix), merged over these options (`retry`, `hedge`,
   * `circuit` field by field). Budget, rate limit and bulkhead stay the link's. Defaults to none.
   * @example
   * methods: { 'report.*': { timeoutMs: 60_000, retry: false }, 'user.get': { idempotent: true } }
   */
  methods?: Readonly<Record<string, MethodOptions>>;
  /** Retries of failed attempts. Defaults to 3 attempts with the default backoff. */
  retry?:
    | (Omit<RetryPolicyOptions, 'onRetry'> & {
        /** Told before each retry's wait; a throwing listener is ignored. Defaults to none. */
        onRetry?: (event: TRPCRetryEvent) => void;
      })
    | false;
}

/** Keys of {@link ResilienceLinkOptions} (core's, checked again by `resolveResilience`, and ours). @internal */
export const RESILIENCE_LINK_KEYS: KnownKeys<ResilienceLinkOptions> = Object.assign(
  {},
  RESILIENCE_KEYS,
  {
    idempotent: true,
    classify: true,
    onWarning: true,
    methods: true,
  } as const,
);

const DEFAULT_IDEMPOTENT = (op: Operation): boolean => op.type !== 'mutation';

/**
 * Validates `options` of `fn` and builds its stacks once: the link's, and
 * one per `methods` entry; each procedure path gets its own circuit unless
 * the options give one breaker (which then covers every procedure).
 * @internal
 */
export function resolveStack(
  fn: string,
  options: ResilienceLinkOptions | undefined,
  standard: boolean,
): (path: string) => Stack {
  // Checked here first so a near-miss of our own keys gets its suggestion.
  optionPath('', () => checkOptions(undefined, options, RESILIENCE_LINK_KEYS), fn);
  const { methods, ...client } = options ?? {};
  const own = resolveOne(fn, '', client, standard, undefined);
  // Every procedure shares the link's budget, rate limit and bulkhead.
  const table = resolveMethods(fn, methods, PROCEDURE_SELECTORS, client, {
    budget: own.stack.budget ?? false,
    rateLimit: own.stack.rateLimit ?? false,
  } as Partial<typeof client>);
  const stacks = new Map(
    table.entries.map((entry) => {
      return [
        entry,
        resolveOne(fn, entry.path, entryOptions(entry) as typeof client, standard, own.stack),
      ];
    }),
  );
  const byPath = new Map<string, Stack>();
  return (path) => {
    let stack = byPath.get(path);
    if (stack === undefined) {
      const entry = table.entryFor(path);
      const chosen = (entry && stacks.get(entry)) ?? own;
      stack =
        chosen.circuitFor === undefined
          ? chosen.stack
          : { ...chosen.stack, circuit: chosen.circuitFor(path) };
      byPath.set(path, stack);
    }
    return stack;
  };
}

/** A stack, and the circuit of each procedure path when it has one per path. */
interface ResolvedStack {
  readonly stack: Stack;
  readonly circuitFor: ((path: string) => CircuitBreaker) | undefined;
}

/**
 * The stack of the link's options, or (with `client`, whose bulkhead, limits
 * and targets it shares) of one `methods` entry found at option path `path`.
 */
function resolveOne(
  fn: string,
  path: string,
  options: Omit<ResilienceLinkOptions, 'methods'>,
  standard: boolean,
  client: Stack | undefined,
): ResolvedStack {
  const { idempotent, classify, onWarning, ...shared } = options;
  for (const [name, value] of [
    ['classify', classify],
    ['onWarning', onWarning],
  ] as const) {
    if (value !== undefined && typeof value !== 'function') {
      throw optionTypeError(name, `must be a function, got ${typeof value}`, fn);
    }
  }
  const safe =
    idempotent === undefined
      ? DEFAULT_IDEMPOTENT
      : typeof idempotent === 'function'
        ? (op: Operation) => idempotent(op) === true
        : typeof idempotent === 'boolean'
          ? () => idempotent
          : undefined;
  if (safe === undefined) {
    throw optionTypeError(
      'idempotent',
      `must be a boolean or a function, got ${typeof idempotent}`,
      fn,
    );
  }
  const plan = resolveResilience(fn, path, shared as ResilienceOptions, standard);
  // An entry's `idempotent: false` says what the user wants for that procedure: nothing to warn.
  const retries = plan.retry !== undefined || plan.hedge !== undefined;
  if (client === undefined && idempotent === false && retries) {
    reportWarning(onWarning, {
      code: 'no-idempotent-methods',
      message: `${fn}: retries are on but \`idempotent: false\` marks no call safe to repeat, so only requests that never left are retried; drop it (queries are safe by default) or mark calls with context.idempotent.`,
    });
  }
  const concurrency = plan.concurrency;
  const targetOf =
    client !== undefined
      ? client.targetOf
      : plan.telemetry === undefined
        ? undefined
        : trpcTargets();
  const clock = shared.clock ?? systemClock;
  // A breaker given covers every procedure; options (or the standard's) make one per procedure.
  const given = shared.circuit;
  const circuitFor =
    plan.circuit === undefined || plan.circuit === given
      ? undefined
      : procedureCircuits(
          (given ?? STANDARD_RESILIENCE.circuit) as CircuitBreakerOptions,
          shared.clock,
          plan.telemetry,
        );
  // A breaker given is told once, as the link's (an entry may share the link's).
  if (circuitFor === undefined && plan.circuit !== undefined && plan.circuit !== client?.circuit) {
    plan.telemetry?.circuit(plan.circuit, Object.freeze({ system: 'trpc' }));
  }
  const stack: Stack = {
    timeoutMs: plan.timeoutMs,
    attemptTimeout: plan.attemptTimeout,
    retry: plan.retry,
    hedge: plan.hedge,
    onRetry: plan.onRetry as ((event: TRPCRetryEvent) => void) | undefined,
    budget: plan.budget,
    circuit: circuitFor === undefined ? plan.circuit : undefined,
    pool:
      client !== undefined
        ? client.pool
        : concurrency &&
          createPool({ concurrency: concurrency.limit, maxQueue: concurrency.maxQueue }),
    limiters:
      client !== undefined
        ? client.limiters
        : plan.adaptive &&
          createAdaptiveLimiters(plan.adaptive, shared.clock, plan.telemetry, (p) =>
            targetOf === undefined ? { system: 'trpc', method: p } : targetOf(p),
          ),
    rateLimit: plan.rateLimit,
    classify: classify ?? classifyTRPCError,
    propagate: plan.propagate,
    idempotent: (op) => {
      const flag = (op.context as BreakwaterOperationContext).idempotent;
      return typeof flag === 'boolean' ? flag : safe(op);
    },
    clock,
    telemetry: plan.telemetry,
    targetOf,
  };
  return { stack, circuitFor };
}

/** One breaker per procedure path, built from `options` on the path's first call and named after it. */
function procedureCircuits(
  options: CircuitBreakerOptions,
  clock: ResilienceOptions['clock'],
  telemetry: SafeTelemetry | undefined,
): (path: string) => CircuitBreaker {
  const settings =
    clock === undefined || options.clock !== undefined ? options : { ...options, clock };
  return (path) => {
    const breaker = createCircuitBreaker({ ...settings, name: path });
    telemetry?.circuit(breaker, Object.freeze({ system: 'trpc', method: path }));
    return breaker;
  };
}

/** The telemetry target of each procedure path (`rpc.system: trpc`, `rpc.method`: the path), built once per path. */
function trpcTargets(): (path: string) => TelemetryTarget {
  const targets = new Map<string, TelemetryTarget>();
  return (path) => {
    let target = targets.get(path);
    if (target === undefined) {
      target = Object.freeze({ system: 'trpc', method: path });
      targets.set(path, target);
    }
    return target;
  };
}

/**
 * A single-purpose link: `options` of `fn` are part `part` of the stack,
 * except {@link PART_EXTRA_KEYS}, which stay at the top; every other part is
 * off. `keys` (when given) are checked first, for the link's own names.
 * @internal
 */
export function partLink<TRouter extends AnyRouter>(
  fn: string,
  options: object,
  keys: Readonly<Record<string, true>> | undefined,
  part: string,
): TRPCLink<TRouter> {
  optionPath(
    '',
    () =>
      keys === undefined
        ? checkObject('', options, false)
        : checkOptions(undefined, options, keys, '', false),
    fn,
  );
  const given: Record<string, unknown> = {};
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options ?? {})) {
    // A key left `undefined` is left out, not given.
    if (value !== undefined) (key in PART_EXTRA_KEYS ? given : own)[key] = value;
  }
  given[part] = own;
  return stackOf(fn, given, part);
}

/**
 * The link of a stack with only the parts in `given`; errors name the path
 * the link's caller wrote (`retry.attempts` is `attempts` to `retryLink`).
 * @internal
 */
export function stackOf<TRouter extends AnyRouter>(
  fn: string,
  given: ResilienceLinkOptions,
  part = '',
): TRPCLink<TRouter> {
  const unpart = (path: string) =>
    part === '' ? path : path === part ? '' : path.replace(`${part}.`, '');
  return stackLink(optionPath(unpart, () => resolveStack(fn, given, false), fn));
}

/**
 * The standard resilience stack as one link, built on core's attempt engine
 * and options (the same object as `protect`, `resilienceInterceptor` and
 * `resilienceMiddleware`). With no options it runs `STANDARD_RESILIENCE`:
 * a 30 s call deadline, 10 s per attempt, 3 attempts with jittered
 * exponential backoff under a retry budget, a failure-rate circuit breaker
 * and a bulkhead of 1 000 calls; each part given replaces its default, and
 * `false` turns it off. Outermost first: bulkhead, rate limit, circuit
 * (one outcome per call, after its retries), call deadline, then attempts
 * retried or hedged (`hedge` replaces retries for the calls it covers), each
 * under the attempt deadline. Queries (and subscriptions, resumed from
 * their last event id) are safe to repeat by default; mutations only with
 * `idempotent`, or when the request provably never left. Subscriptions
 * take no deadline, hedge or bulkhead slot. Put it before the terminating link.
 * @example
 * links: [resilienceLink({ retry: { attempts: 4 }, attemptTimeoutMs: 2_000 }), httpBatchLink({ url })]
 */
export function resilienceLink<TRouter extends AnyRouter = AnyRouter>(
  options?: ResilienceLinkOptions,
): TRPCLink<TRouter> {
  return stackLink(resolveStack('resilienceLink', options, true));
}
