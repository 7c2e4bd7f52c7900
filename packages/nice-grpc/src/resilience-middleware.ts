import {
  type Criticality,
  createPool,
  type MethodOptions,
  type ResilienceOptions,
  type ResilienceWarning,
  STANDARD_RESILIENCE,
} from '@breakwater/core';
import type { RetryPolicyOptions } from '@breakwater/core/adapter';
import type { GrpcRetryEvent, GrpcStatusClassifier, MethodSelector } from '@breakwater/core/grpc';
import {
  checkOptions,
  entryOptions,
  GRPC_METHOD_SELECTORS,
  grpcAdaptiveLimiters,
  type KnownKeys,
  optionPath,
  RESILIENCE_KEYS,
  type ResiliencePlan,
  resolveMethods,
  resolveResilience,
} from '@breakwater/core/internal';
import { systemClock, systemSleep } from '@breakwater/core/time';
import type { Pool } from '@breakwater/core/types';
import { type ClientMiddleware, composeClientMiddleware } from 'nice-grpc-common';
import { circuitRegistry, type GrpcCircuitPart } from './circuit-breaker-middleware.js';
import { type DeadlineCallOptions, deadlineStep, deadlineStream } from './deadline-middleware.js';
import { admissionStep, admissionStream } from './internals/admission.js';
import { attemptsStep, attemptsStream } from './internals/attempts-stage.js';
import { stepMiddleware } from './internals/next.js';
import { attemptStage } from './internals/parts.js';
import {
  type PropagateCallOptions,
  propagationStep,
  propagationStream,
} from './internals/propagation.js';
import { telemetryStage } from './internals/telemetry.js';
import type { RetryCallOptions } from './retry-middleware.js';

/** Per-call options of {@link resilienceMiddleware}: `deadline`, `criticality`, `propagate: false`, and `retry`/`hedge: false`, `attempts`. */
export type ResilienceCallOptions = DeadlineCallOptions &
  RetryCallOptions &
  PropagateCallOptions & {
    /** How much the call matters under `concurrency.adaptive`: the lowest tier is refused first. Defaults to `'default'`. */
    criticality?: Criticality;
  };

/** `retry` of {@link ResilienceMiddlewareOptions}: core's, with gRPC retry events. */
export interface GrpcRetryPolicyOptions extends Omit<RetryPolicyOptions, 'onRetry'> {
  /** Told before each retry's wait: the method, the attempt that failed, the delay and the status code; a throwing listener is ignored. Defaults to none. */
  onRetry?: (event: GrpcRetryEvent) => void;
}

/**
 * Options of {@link resilienceMiddleware}: core's `ResilienceOptions` (the
 * same object `protect`, `resilienceInterceptor` and `resilienceLink` take)
 * plus the gRPC keys `idempotent`, `classify` and a circuit `scope`. A part
 * left out takes the standard stack's default; `false` turns it off.
 */
export interface ResilienceMiddlewareOptions extends Omit<ResilienceOptions, 'retry' | 'circuit'> {
  /** Retries of failed attempts. Defaults to 3 attempts with the default backoff. */
  retry?: GrpcRetryPolicyOptions | false;
  /** Circuit breaking: core breaker options plus `scope`, or one breaker for every method. Defaults to the standard failure-rate circuit per method. */
  circuit?: GrpcCircuitPart | false;
  /** Methods safe to repeat besides those their definition marks `IDEMPOTENT`/`NO_SIDE_EFFECTS`. Defaults to none. */
  idempotent?: MethodSelector;
  /** Status → verdict for every part. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Told once per client when `retry` is given and a called method is not known idempotent. Defaults to a Node process warning, printed once per process. */
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

const KEYS: KnownKeys<ResilienceMiddlewareOptions> = Object.assign({}, RESILIENCE_KEYS, {
  idempotent: true,
  classify: true,
  onWarning: true,
  methods: true,
} as const);

/**
 * One middleware with the whole Breakwater stack, in the grpc-js adapter's
 * order (outermost first):
 *
 * 1. `timeoutMs` — the call's deadline covers everything below (queueing, retries, backoff);
 * 2. `circuit` — an open circuit refuses before any token or slot is spent,
 *    and a call counts once, after its retries;
 * 3. `rateLimit` — one token per call, not per attempt;
 * 4. `concurrency` — one slot covers the call with all its attempts and backoff;
 * 5. `hedge` or `retry` — attempts go to the channel, each under `attemptTimeoutMs`;
 *    a hedged call is not also retried.
 *
 * With no options it is the standard stack (`STANDARD_RESILIENCE` of core:
 * 30 s deadline, 10 s per attempt, 3 attempts with jittered backoff and a
 * retry budget, a failure-rate circuit per method, 1 000 calls at once).
 * With `createClientFactory().use(a).use(b)` nice-grpc runs `b` first; this
 * middleware is one `use()`, so the order above holds whatever else you add.
 * @example
 * const client = createClientFactory()
 *   .use(resilienceMiddleware({ timeoutMs: 2_000, idempotent: ['shop.Catalog'] }))
 *   .create(CatalogDefinition, channel);
 */
export function resilienceMiddleware(
  options: ResilienceMiddlewareOptions = {},
): ClientMiddleware<ResilienceCallOptions> {
  const fn = 'resilienceMiddleware';
  checkOptions(fn, options, KEYS);
  const { methods, ...client } = options;
  const own = build(fn, '', client, undefined);
  // Every method shares the client's budget, rate limit and bulkhead.
  const table = resolveMethods(fn, methods, GRPC_METHOD_SELECTORS, client, {
    budget: own.plan.budget ?? false,
    rateLimit: own.plan.rateLimit ?? false,
  } as Partial<typeof client>);
  if (table.entries.length === 0) return own.middleware;
  const stacks = new Map(
    table.entries.map((entry) => {
      return [entry, build(fn, entry.path, entryOptions(entry) as typeof client, own).middleware];
    }),
  );
  return (call, callOptions) => {
    const entry = table.entryFor(call.method.path);
    return ((entry && stacks.get(entry)) ?? own.middleware)(call, callOptions);
  };
}

/** One stack: the client's, or a `methods` entry's (found at option path `path`) sharing `client`'s bulkhead. */
interface Built {
  readonly plan: ResiliencePlan;
  readonly pool: Pool | undefined;
  readonly limiters: ReturnType<typeof grpcAdaptiveLimiters>;
  readonly middleware: ClientMiddleware<ResilienceCallOptions>;
}

function build(
  fn: string,
  path: string,
  options: Omit<ResilienceMiddlewareOptions, 'methods' | 'idempotent'> & {
    idempotent?: MethodSelector | boolean | undefined;
  },
  client: Built | undefined,
): Built {
  // Split once: the adapter's keys here, the shared vocabulary to core.
  const { idempotent, classify, onWarning, retry, circuit, ...rest } = options;
  let policy: ResilienceOptions['retry'] = retry as ResilienceOptions['retry'];
  let onRetry: GrpcRetryPolicyOptions['onRetry'];
  if (typeof retry === 'object' && retry !== null) {
    ({ onRetry, ...policy } = retry);
  }
  const shared = (
    retry === undefined ? { ...rest, circuit: false } : { ...rest, retry: policy, circuit: false }
  ) as ResilienceOptions;
  const plan = resolveResilience(fn, path, shared, true);
  const part = circuit === undefined ? STANDARD_RESILIENCE.circuit : circuit;
  const clock = rest.clock ?? systemClock;
  // The retry stage writes `grpc-timeout` on every attempt: the deadline stage leaves it.
  const deadline = {
    timeoutMs: plan.timeoutMs,
    clock,
    sleep: rest.sleep ?? systemSleep,
    stamp: false,
  };
  const slots = plan.concurrency;
  const pool =
    client === undefined
      ? slots && createPool({ concurrency: slots.limit, maxQueue: slots.maxQueue })
      : client.pool;
  const limiters = client === undefined ? grpcAdaptiveLimiters(plan, rest.clock) : client.limiters;
  const circuitPath = path === '' ? 'circuit' : `${path}.circuit`;
  const admission = {
    circuits:
      part === false ? undefined : circuitRegistry(fn, circuitPath, part, classify, rest.clock),
    bucket: plan.rateLimit,
    pool,
    limiters,
  };
  const admits = admission.circuits || admission.bucket || admission.pool || admission.limiters;
  const retryAsked = retry !== undefined;
  const extras = { idempotent, classify, onWarning, onRetry, clock, sleep: rest.sleep, retryAsked };
  const attempts = optionPath(path, () => attemptStage(fn, plan, extras, 'retry.'), fn);
  // A call without a response stream runs every stage as a step of this middleware's one
  // generator; a response stream, whose stages hold it until it ends, through one each.
  let step = deadlineStep(
    deadline,
    admits ? admissionStep(admission, attemptsStep(attempts)) : attemptsStep(attempts),
  );
  const stream: ClientMiddleware<ResilienceCallOptions>[] = [deadlineStream(deadline)];
  // Circuit, rate limit and concurrency run as one stage.
  if (admits) stream.push(admissionStream(admission));
  stream.push(attemptsStream(attempts));
  // Outside the deadline: an inherited deadline earlier than `timeoutMs` is the caller's.
  // Always on: it also stamps the deadline for a nice-grpc server, `propagate: false` or not.
  step = propagationStep(plan.propagate, plan.timeoutMs, classify, step);
  stream.unshift(
    propagationStream(plan.propagate, plan.timeoutMs, classify) as (typeof stream)[number],
  );
  // Outermost, so that it sees refusals and how every call ends.
  if (plan.telemetry !== undefined) {
    const telemetry = telemetryStage(plan.telemetry, admission.circuits, step);
    step = telemetry.step;
    stream.unshift(telemetry.stream as (typeof stream)[number]);
  }
  return { plan, pool, limiters, middleware: stepMiddleware(step, compose(stream)) };
}

/** The middleware running `stack` outermost first. */
function compose(
  stack: ClientMiddleware<ResilienceCallOptions>[],
): ClientMiddleware<ResilienceCallOptions> {
  let composed = stack.pop() as ClientMiddleware<ResilienceCallOptions>;
  // composeClientMiddleware(inner, outer) runs `outer` first.
  for (let i = stack.length - 1; i >= 0; i--) {
    composed = composeClientMiddleware(
      composed,
      stack[i] as ClientMiddleware<ResilienceCallOptions>,
    );
  }
  return composed;
}
