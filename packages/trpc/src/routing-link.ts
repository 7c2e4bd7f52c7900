import {
  createRetryBudget,
  createRouter,
  type ErrorVerdict,
  isConcurrencyLimitError,
  isRoutingError,
  type MethodOptions,
  type RetryBudget,
  type Router,
  type RouterOptions,
  STANDARD_RESILIENCE,
} from '@breakwater/core';
import type { RouteProtection } from '@breakwater/core/adapter';
import {
  ADAPTER_SELECTION,
  callsOnlyTelemetry,
  checkNumber,
  checkOptions,
  keysOf,
  onAbort,
  optionPath,
  optionTypeError,
  PROCEDURE_SELECTORS,
  resolveMethods,
  resolvePropagate,
  shareLimiters,
  timerWheelFor,
  WheelEntry,
} from '@breakwater/core/internal';
import { systemClock } from '@breakwater/core/time';
import type { RouteHedge, RouteSelection, RouteSelectionType } from '@breakwater/core/types';
import { type Operation, type OperationLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { type Observer, observable } from '@trpc/server/observable';
import { classifyTRPCError } from './classify.js';
import { type BreakwaterOperationContext, contextFault } from './context.js';
import type { Envelope } from './internals/call.js';
import { aborted, deadlineRefusal, limitRefusal, refusal } from './internals/errors.js';
import { inheritCall, outboundCriticality, withOutbound } from './internals/propagation.js';
import { noNext, runLink } from './internals/run-link.js';
import type { TRPCIdempotent } from './resilience-link.js';

/** The routers of the link's options or of one `methods` entry, and its call deadline. */
interface RouteStack<TRouter extends AnyRouter> {
  /** Routes calls safe to repeat: failover, retries, hedging. */
  readonly router: Router<OperationLink<TRouter>>;
  /** Routes every other call: no hedge, no race. May be `router` itself. */
  readonly single: Router<OperationLink<TRouter>>;
  /** Deadline of each call in ms (`Infinity` for none) unless `context.timeoutMs` says otherwise. */
  readonly callMs: number;
}

/** One tRPC endpoint behind {@link routingLink}. */
export interface TRPCEndpoint<TRouter extends AnyRouter> {
  /** Non-empty unique id (names the endpoint in health, events and errors). */
  id: string;
  /** Its terminating link, e.g. `httpBatchLink({ url, fetch: createStatusPreservingFetch() })`. */
  link: TRPCLink<TRouter>;
}

/** Keys of {@link TRPCEndpoint}. @internal */
export const ENDPOINT_KEYS = keysOf<TRPCEndpoint<AnyRouter>>()(['id', 'link']);

/** Options of {@link routingLink}: the core router's options, with endpoints for providers. */
export interface RoutingLinkOptions<TRouter extends AnyRouter>
  extends Omit<RouterOptions<OperationLink<TRouter>>, 'providers' | 'classify'> {
  /** The endpoints, in registration order. At least one. */
  endpoints: readonly TRPCEndpoint<TRouter>[];
  /** Order in which endpoints are tried (the core router's selection). Defaults to `'least-loaded'` (power of two choices over peak-EWMA latency × calls in flight). */
  selection?: RouteSelection | RouteSelectionType;
  /** Maps a failed attempt's error to a verdict. Defaults to `classifyTRPCError`. */
  classify?: (error: unknown, op: Operation) => ErrorVerdict;
  /**
   * Which operations are safe to send again after a server may have seen
   * them (retried per `protection`, failed over, hedged): `true` all,
   * `false` none, or per operation; per call, `context.idempotent` overrides
   * it. Apart from this, any call — a mutation too — is retried or failed
   * over when its request provably never left (connection refused, a
   * circuit refused it): the classifier marks it `neverSent`. Defaults to
   * queries, not mutations.
   */
  idempotent?: TRPCIdempotent;
  /**
   * Deadline of each query and mutation in ms — every visit, retry,
   * failover and wait — or `false` for none; per call `context.timeoutMs`
   * overrides it. No retry or failover starts that cannot start before it.
   * Defaults to `STANDARD_RESILIENCE.timeoutMs` (30 s), as in `resilienceLink`.
   */
  timeoutMs?: number | false;
  /**
   * Settings per procedure path (`'user.get'`) or router (`'user.*'`): a call takes the most
   * specific entry, merged over these options (`timeoutMs`, and `protection`'s `attemptTimeoutMs`,
   * `retry`, `circuit`, and `hedge`, the objects field by field). An entry's procedures get
   * their own circuit per endpoint; endpoints, health, budget and concurrency limits stay the
   * link's. Defaults to none.
   * @example
   * methods: { 'report.export': { timeoutMs: 60_000, retry: false } }
   */
  methods?: Readonly<Record<string, MethodOptions>>;
}

/** Keys of {@link RoutingLinkOptions}. @internal */
export const ROUTING_LINK_KEYS = keysOf<RoutingLinkOptions<AnyRouter>>()([
  'endpoints',
  'timeoutMs',
  'classify',
  'idempotent',
  'protection',
  'selection',
  'health',
  'hedge',
  'panic',
  'concurrency',
  'budget',
  'clock',
  'sleep',
  'random',
  'telemetry',
  'onEvent',
  'propagate',
  'methods',
]);

/** What a `methods` entry (or the link's options) sets: core's merge works on this view. */
interface RouteView {
  timeoutMs?: number | false;
  attemptTimeoutMs?: number | false;
  retry?: RouteProtection['retry'];
  hedge?: RouteHedge | false;
  circuit?: RouteProtection['circuit'];
}

/** The router options of `view` over the link's `routerOptions`. */
function withView<O extends { protection?: RouteProtection; hedge?: RouteHedge | false }>(
  routerOptions: O,
  view: RouteView,
): O {
  const { timeoutMs: _call, hedge, ...protection } = view;
  const { hedge: _hedge, ...rest } = routerOptions;
  return {
    ...rest,
    protection: { ...routerOptions.protection, ...protection },
    ...(hedge === undefined ? {} : { hedge }),
  } as O;
}

/** A call deadline option as ms (`Infinity` for none). */
function callMsOf(path: string, value: number | false): number {
  return value === false
    ? Number.POSITIVE_INFINITY
    : checkNumber(path, value, { above: 0, allowInfinity: true });
}

function isBudget(value: unknown): value is RetryBudget {
  return typeof (value as Partial<RetryBudget> | undefined)?.tryRetry === 'function';
}

/** Stands in for the endpoints' links in the router built only to check the options. */
const noLink: unknown = undefined;

/**
 * The verdict for a call not safe to repeat: it may be retried or go
 * elsewhere only if its request provably never reached a server.
 */
function onlyIfNeverSent(verdict: ErrorVerdict): ErrorVerdict {
  if (verdict.neverSent === true) return verdict;
  return { retry: false, failover: false, countForCircuit: verdict.countForCircuit !== false };
}

/** A routed call's deadline, waiting on the timer wheel; `onExpire` ends the call. */
class CallDeadline extends WheelEntry {
  constructor(private readonly onExpire: (timerError: Error | undefined) => void) {
    super();
  }

  expire(timerError: Error | undefined): void {
    this.onExpire(timerError);
  }
}

/** The caller's error: the last endpoint's `TRPCClientError` (routing details in `meta.routing`), else the core error as cause. */
function toClientError(error: unknown): TRPCClientError<AnyRouter> {
  if (isRoutingError(error)) {
    const last = error.errors[error.errors.length - 1];
    if (last instanceof TRPCClientError)
      return TRPCClientError.from(last, { meta: { routing: error } });
    return new TRPCClientError(error.message, { cause: error });
  }
  // Every endpoint's adaptive limit was full: nothing was sent.
  if (isConcurrencyLimitError(error)) return limitRefusal(error);
  return TRPCClientError.from(error instanceof Error ? error : new Error(String(error)));
}

/**
 * A terminating link that spreads calls over several tRPC endpoints with the
 * core router (`createRouter`): failover, per-endpoint circuits and retries
 * (`protection`), health-aware `selection` (least-loaded by default; priority
 * with recovery probes, sticky, round-robin, least-latency, power-of-two,
 * race) and `hedge`.
 * Calls safe to repeat (`idempotent`: queries by default) fail over, retry
 * and hedge on the classifier's verdict. Any other call (a mutation) is never
 * hedged, and is retried or failed over only when its request provably never
 * left (connection refused, circuit open: the verdict's `neverSent`) — a
 * mutation a proxy answered with 502 is not re-run elsewhere. Subscriptions go to the first endpoint whose circuit admits them,
 * without failover mid-stream (put `retryLink` before this link to resume).
 * @example
 * routingLink({
 *   endpoints: [
 *     { id: 'primary', link: httpBatchLink({ url: a, fetch: createStatusPreservingFetch() }) },
 *     { id: 'secondary', link: httpBatchLink({ url: b, fetch: createStatusPreservingFetch() }) },
 *   ],
 *   selection: { type: 'priority', priorities: { primary: 1 } },
 *   protection: { circuit: STANDARD_RESILIENCE.circuit },
 * })
 */
export function routingLink<TRouter extends AnyRouter = AnyRouter>(
  options: RoutingLinkOptions<TRouter>,
): TRPCLink<TRouter> {
  // initialized config
  const {
    endpoints,
    classify = classifyTRPCError,
    idempotent,
    timeoutMs = STANDARD_RESILIENCE.timeoutMs,
    selection = ADAPTER_SELECTION,
    propagate,
    methods,
    ...rest
  } = options;
  // The link inherits from the inbound call (its deadline timer, the attempts' headers); its routers do not.
  const routerOptions = { ...rest, selection, propagate: false as const };
  checkOptions('routingLink', options, ROUTING_LINK_KEYS, '', false);
  if (!Array.isArray(endpoints) || endpoints.length === 0) {
    throw optionTypeError('endpoints', 'must be a non-empty array', 'routingLink');
  }
  const callMs = optionPath('', () => callMsOf('timeoutMs', timeoutMs), 'routingLink');
  if (
    idempotent !== undefined &&
    typeof idempotent !== 'boolean' &&
    typeof idempotent !== 'function'
  ) {
    throw optionTypeError(
      'idempotent',
      `must be a boolean or a function, got ${typeof idempotent}`,
      'routingLink',
    );
  }
  const clientView: RouteView = {
    timeoutMs,
    ...(rest.protection?.attemptTimeoutMs === undefined
      ? {}
      : { attemptTimeoutMs: rest.protection.attemptTimeoutMs }),
    ...(rest.protection?.retry === undefined ? {} : { retry: rest.protection.retry }),
    ...(rest.hedge === undefined ? {} : { hedge: rest.hedge }),
    ...(rest.protection?.circuit === undefined ? {} : { circuit: rest.protection.circuit }),
  };
  const table = resolveMethods('routingLink', methods, PROCEDURE_SELECTORS, clientView);
  const entryCallMs = new Map(
    table.entries.map((e) => [
      e,
      optionPath(e.path, () => callMsOf('timeoutMs', e.options.timeoutMs ?? false), 'routingLink'),
    ]),
  );
  const safe = (op: Operation): boolean => {
    const flag = (op.context as BreakwaterOperationContext).idempotent;
    if (typeof flag === 'boolean') return flag;
    const own = table.entryFor(op.path)?.idempotent;
    if (own !== undefined) return own;
    if (idempotent === undefined) return op.type !== 'mutation';
    return typeof idempotent === 'function' ? idempotent(op) === true : idempotent;
  };
  for (let i = 0; i < endpoints.length; i++) {
    checkOptions('routingLink', endpoints[i], ENDPOINT_KEYS, `endpoints[${i}]`, false);
  }
  const plan = optionPath('', () => resolvePropagate(propagate), 'routingLink');
  // The routers are built per client; build a throwaway now so bad settings throw here
  // (probe 'none': it starts no checker, though intervals are still checked).
  const { health, telemetry } = routerOptions;
  // Telemetry hears the throwaway's calls only (it makes none): its targets and circuits are not the client's.
  const callsOnly = telemetry === undefined ? {} : { telemetry: callsOnlyTelemetry(telemetry) };
  const check = (prefix: string, view: RouteView) =>
    optionPath(
      (path) => `${prefix}${path.replace(/^providers\[/, 'endpoints[')}`,
      () =>
        createRouter({
          ...withView(routerOptions, view),
          ...callsOnly,
          ...(health === undefined ? {} : { health: { ...health, probe: 'none' } }),
          providers: endpoints.map((e) => ({
            id: e.id,
            resource: noLink as OperationLink<TRouter>,
          })),
        }).stop(),
      'routingLink',
    );
  check('', clientView);
  for (const entry of table.entries) check(`${entry.path}.`, entry.options);

  // The call deadlines wait on the router's time: core's shared wheel, or the injected sleep.
  const clock = routerOptions.clock ?? systemClock;
  const wheel = timerWheelFor(routerOptions.sleep, clock);

  return (runtime) => {
    // initialized in app
    const providers = endpoints.map((e) => ({ id: e.id, resource: e.link(runtime) }));
    // One budget for every procedure: created once when given as options.
    const { budget } = routerOptions;
    const oneBudget =
      budget === undefined || budget === false || isBudget(budget)
        ? {}
        : { budget: createRetryBudget(budget) };
    const client = stackOf(clientView, callMs, undefined);
    const stacks = new Map(
      table.entries.map((e) => [
        e,
        stackOf(e.options, entryCallMs.get(e) ?? callMs, client.router),
      ]),
    );
    const stackFor = (path: string): RouteStack<TRouter> => {
      const entry = table.entryFor(path);
      return (entry && stacks.get(entry)) ?? client;
    };

    /**
     * The routers of the link's options or of one entry (`main` the link's router, whose
     * health registry, probes and limits the entry's share). Hedging and racing are
     * router-wide; calls that must not be repeated use a twin with neither (a race's twin goes
     * by priority), sharing the health registry (its circuits are its own). Telemetry hears
     * its calls, and the targets' health and circuits of the link's main router only, so
     * each gauge has one source.
     */
    function stackOf(
      view: RouteView,
      ms: number,
      main: Router<OperationLink<TRouter>> | undefined,
    ): RouteStack<TRouter> {
      const own = { ...withView(routerOptions, view), ...oneBudget };
      const router: Router<OperationLink<TRouter>> =
        main === undefined
          ? createRouter({ ...own, providers })
          : createRouter({
              ...own,
              ...callsOnly,
              health: { ...own.health, probe: 'none', registry: main.health },
              providers,
            });
      const { hedge, selection, ...unhedged } = own;
      const raced = (typeof selection === 'string' ? selection : selection?.type) === 'race';
      const single =
        (hedge !== undefined && hedge !== false) || raced
          ? createRouter({
              ...unhedged,
              ...(raced || selection === undefined ? {} : { selection }),
              ...callsOnly,
              health: { ...unhedged.health, probe: 'none', registry: router.health },
              providers,
            })
          : router;
      shareLimiters(single, main ?? router);
      if (main !== undefined) shareLimiters(router, main);
      return { router, single, callMs: ms };
    }
    const router = client.router;

    return ({ op }) => {
      // initialized for request
      if (op.type === 'subscription') {
        const chosen =
          providers.find((p) => router.circuit(p.id)?.state !== 'open') ?? providers[0];
        return (chosen as (typeof providers)[number]).resource({ op, next: noNext });
      }
      return observable<Envelope, TRPCClientError<TRouter>>((observer) => {
        // Every error the link reports is a TRPCClientError (toClientError and the refusals).
        const outer = observer as Partial<Observer<Envelope, unknown>>;
        // A misspelt per-call key would be ignored in silence: the call is refused, unsent.
        const fault = contextFault(op.context);
        if (fault !== undefined) {
          outer.error?.(refusal(fault));
          return () => {};
        }
        const stack = stackFor(op.path);
        const inherited = inheritCall(plan, stack.callMs, classify, op, outer);
        if (inherited?.expired) {
          // The inbound deadline has passed: nothing is sent.
          inherited.observer.error?.(deadlineRefusal(inherited.op, 0, 'timeout'));
          return () => {};
        }
        return route(stack, inherited?.op ?? op, inherited?.observer ?? outer);
      });
    };

    /** One request over the endpoints, `op` already carrying what it inherits. */
    function route(
      stack: RouteStack<TRouter>,
      op: Operation,
      observer: Partial<Observer<Envelope, unknown>>,
    ): () => void {
      const callerSignal = op.signal;
      // As bare tRPC and resilienceLink do: a call its caller already gave up sends nothing.
      if (callerSignal?.aborted) {
        observer.error?.(aborted(callerSignal));
        return () => {};
      }
      const ac = new AbortController();
      let deadline: CallDeadline | undefined;
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        stopListening?.();
        if (deadline !== undefined) wheel.cancel(deadline);
        return true;
      };
      const stopListening =
        callerSignal == null
          ? undefined
          : onAbort(callerSignal, () => ac.abort(callerSignal.reason));
      const ms = (op.context as BreakwaterOperationContext).timeoutMs ?? stack.callMs;
      let deadlineAt = Number.POSITIVE_INFINITY;
      // What each attempt tells its server (`breakwaterHeaders`): the call's deadline as wall-clock time.
      let sentBy = Number.POSITIVE_INFINITY;
      if (ms !== Number.POSITIVE_INFINITY) {
        // A per-call `context.timeoutMs` of 0, below or NaN has passed already.
        // biome-ignore lint/complexity/useMathMinMax: Math.max keeps NaN, which the wheel refuses.
        const wait = ms > 0 ? ms : 0;
        deadlineAt = clock() + wait;
        sentBy = systemClock() + wait;
        deadline = new CallDeadline((timerError) => {
          if (!settle()) return;
          const error =
            timerError === undefined ? deadlineRefusal(op, ms, 'timeout') : refusal(timerError);
          ac.abort(error.cause);
          observer.error?.(error);
        });
        wheel.schedule(deadline, wait);
      }
      const repeatable = safe(op);
      const verdictOf = repeatable
        ? (error: unknown) => classify(error, op)
        : (error: unknown) => onlyIfNeverSent(classify(error, op));
      const criticality = outboundCriticality(op);
      let attempts = 0;
      (repeatable ? stack.router : stack.single)
        .execute(
          (link, { signal }) =>
            runLink(
              link,
              withOutbound(op, { deadline: sentBy, attempt: ++attempts, criticality }),
              signal,
            ),
          {
            signal: ac.signal,
            classify: verdictOf,
            deadlineAt,
            idempotent: repeatable,
            method: op.path,
            criticality: (op.context as BreakwaterOperationContext).criticality,
          },
        )
        .then(
          (envelope) => {
            if (!settle()) return;
            observer.next?.(envelope as Envelope);
            observer.complete?.();
          },
          (error: unknown) => {
            if (!settle()) return;
            observer.error?.(toClientError(error));
          },
        );
      return () => {
        settle();
        ac.abort();
      };
    }
  };
}
