import {
  checkKeys,
  checkNumber,
  checkObject,
  checkOneOf,
  optionalNumber,
  optionTypeError,
} from '../internal/validate.js';
import type { Clock } from '../time/clock.js';
import type { RandomSource } from '../time/random.js';
import { DEFAULT_LOAD_SETTINGS, type LoadSettings, type ProviderLoad } from './load.js';
import {
  LEAST_LOADED_SELECTION_KEYS,
  PLAIN_SELECTION_KEYS,
  PRIORITY_SELECTION_KEYS,
  type RouteSelection,
  type RouteSelectionType,
} from './types.js';

/** What a strategy may read about the providers, by registration index. @internal */
export interface ProviderView {
  /** Number of registered providers. */
  readonly count: number;
  /** Smoothed latency in ms, or undefined when nothing was measured yet. */
  latency(index: number): number | undefined;
  /** Visits in flight and their peak-EWMA latency. */
  load(index: number): ProviderLoad;
  /** The router's clock (least-loaded costs are read at the request's start). */
  readonly clock: Clock;
  /** False when the provider's circuit or health is open (does not consume a probe). */
  healthy(index: number): boolean;
}

/**
 * Decides the order in which one request tries the providers.
 * @internal
 */
export interface SelectionStrategy {
  readonly type: RouteSelectionType;
  /** Bumped when the choice changes (sticky); captured at `order()` time. */
  readonly generation: number;
  /** Provider indices, best first. Static strategies return a shared array (no allocation). */
  order(): readonly number[];
  /** The request that read `generation` succeeded on provider `index`. */
  succeeded(index: number, generation: number): void;
}

const SELECTIONS: readonly RouteSelectionType[] = [
  'priority',
  'sticky',
  'round-robin',
  'least-latency',
  'power-of-two',
  'least-loaded',
  'race',
];

/**
 * The selection of the adapters' multi-target routing (grpc-js
 * `createRoutingChannel`, tRPC `routingLink`) when the user names none: load
 * aware, as a balancer is expected to be. `createRouter` keeps `'priority'`.
 * @internal
 */
export const ADAPTER_SELECTION = 'least-loaded' satisfies RouteSelectionType;

const SELECTION_KEYS = {
  priority: PRIORITY_SELECTION_KEYS,
  'least-loaded': LEAST_LOADED_SELECTION_KEYS,
} as const;

/** The spec of `selection` (an object, or a type name as shorthand); the default is `'priority'`. */
function selectionSpec(selection: RouteSelection | RouteSelectionType | undefined): RouteSelection {
  if (selection === undefined) return { type: 'priority' };
  return typeof selection === 'string' ? ({ type: selection } as RouteSelection) : selection;
}

/**
 * The peak-EWMA settings of every provider's load: a `'least-loaded'`
 * selection's `decayMs` and `defaultLatencyMs`, else the defaults (the load is
 * tracked whatever the selection). Read before the selection itself is checked.
 * @internal
 */
export function loadSettings(
  selection: RouteSelection | RouteSelectionType | undefined,
): LoadSettings {
  const spec = selectionSpec(selection);
  if (typeof spec !== 'object' || spec === null || spec.type !== 'least-loaded') {
    return DEFAULT_LOAD_SETTINGS;
  }
  return {
    decayMs: optionalNumber('selection.decayMs', spec.decayMs, DEFAULT_LOAD_SETTINGS.decayMs, {
      above: 0,
    }),
    defaultLatencyMs: optionalNumber(
      'selection.defaultLatencyMs',
      spec.defaultLatencyMs,
      DEFAULT_LOAD_SETTINGS.defaultLatencyMs,
      { min: 0 },
    ),
  };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** Validates `selection` (an object, or a type name as shorthand) against the provider ids. @internal */
export function createSelection(
  selection: RouteSelection | RouteSelectionType | undefined,
  ids: readonly string[],
  view: ProviderView,
  random: RandomSource,
): SelectionStrategy {
  const spec = selectionSpec(selection);
  checkObject('selection', spec, false);
  const type = checkOneOf('selection.type', spec.type, SELECTIONS);
  const keys =
    type in SELECTION_KEYS
      ? SELECTION_KEYS[type as keyof typeof SELECTION_KEYS]
      : PLAIN_SELECTION_KEYS;
  checkKeys('createRouter', spec, keys, 'selection');
  switch (type) {
    case 'priority':
      return staticOrder(type, priorityOrder(ids, (spec as { priorities?: unknown }).priorities));
    case 'race':
      return staticOrder(type, range(ids.length));
    case 'sticky':
      return new StickySelection(ids.length);
    case 'round-robin':
      return new RoundRobinSelection(ids.length);
    case 'least-latency':
      return dynamicOrder(type, () => leastLatencyOrder(view));
    case 'power-of-two':
      return dynamicOrder(type, () => powerOfTwoOrder(view, random));
    case 'least-loaded':
      return dynamicOrder(type, () => leastLoadedOrder(view, random));
  }
}

function priorityOrder(ids: readonly string[], priorities: unknown): number[] {
  checkObject('selection.priorities', priorities);
  const map = (priorities ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (!ids.includes(key)) {
      throw optionTypeError(
        'selection.priorities',
        `names unknown provider ${JSON.stringify(key)}; known: ${ids.map((id) => JSON.stringify(id)).join(', ')}`,
      );
    }
    checkNumber(`selection.priorities[${JSON.stringify(key)}]`, map[key]);
  }
  const weight = (i: number) => (map[ids[i] as string] as number | undefined) ?? 0;
  // Array.prototype.sort is stable, so ties keep registration order.
  return range(ids.length).sort((a, b) => weight(b) - weight(a));
}

function staticOrder(type: RouteSelectionType, order: readonly number[]): SelectionStrategy {
  return { type, generation: 0, order: () => order, succeeded() {} };
}

function dynamicOrder(type: RouteSelectionType, order: () => number[]): SelectionStrategy {
  return { type, generation: 0, order, succeeded() {} };
}

/** Rotations of `0..n-1`, built on first use and then shared by every request. */
class Rotations {
  private readonly cache: (readonly number[] | undefined)[];
  constructor(
    private readonly n: number,
    private readonly build: (first: number) => number[],
  ) {
    this.cache = new Array(n);
  }
  get(first: number): readonly number[] {
    let order = this.cache[first];
    if (order === undefined) {
      order = this.build(first);
      // Caching n orders of n entries is cheap for realistic provider counts.
      if (this.n <= 64) this.cache[first] = order;
    }
    return order;
  }
}

class RoundRobinSelection implements SelectionStrategy {
  readonly type = 'round-robin';
  readonly generation = 0;
  private next = 0;
  private readonly rotations: Rotations;
  constructor(private readonly n: number) {
    this.rotations = new Rotations(n, (first) => range(n).map((i) => (first + i) % n));
  }
  order(): readonly number[] {
    const first = this.next;
    this.next = (first + 1) % this.n;
    return this.rotations.get(first);
  }
  succeeded(): void {}
}

/**
 * Sticky: the current choice first, then the others in registration order.
 * A success elsewhere moves the choice only when the request started in the
 * current generation, so of many requests that failed over together the first
 * to succeed wins, and a late result from an older generation never
 * overwrites a newer choice.
 */
class StickySelection implements SelectionStrategy {
  readonly type = 'sticky';
  generation = 0;
  private current = 0;
  private readonly rotations: Rotations;
  constructor(n: number) {
    this.rotations = new Rotations(n, (first) => [first, ...range(n).filter((i) => i !== first)]);
  }
  order(): readonly number[] {
    return this.rotations.get(this.current);
  }
  succeeded(index: number, generation: number): void {
    if (index === this.current || generation !== this.generation) return;
    this.current = index;
    this.generation++;
  }
}

/** Unknown latency sorts first (it must be measured), then lowest; ties by registration order. */
function leastLatencyOrder(view: ProviderView): number[] {
  const key = (i: number) => view.latency(i) ?? Number.NEGATIVE_INFINITY;
  return range(view.count).sort((a, b) => key(a) - key(b));
}

/**
 * Two distinct random providers among the healthy ones (the first drawn first),
 * or `undefined` when fewer than two are healthy.
 */
function drawTwo(healthy: readonly number[], random: RandomSource): [number, number] | undefined {
  if (healthy.length < 2) return undefined;
  const a = healthy[Math.floor(random() * healthy.length)] as number;
  let b = healthy[Math.floor(random() * (healthy.length - 1))] as number;
  if (b === a) b = healthy[healthy.length - 1] as number;
  return [a, b];
}

function healthyProviders(view: ProviderView): number[] {
  const healthy: number[] = [];
  for (let i = 0; i < view.count; i++) if (view.healthy(i)) healthy.push(i);
  return healthy;
}

/** `first`, then every other provider: the other healthy ones, then the rest, each in registration order. */
function thenTheRest(view: ProviderView, healthy: readonly number[], first: number[]): number[] {
  const order = first;
  for (const i of healthy) if (!order.includes(i)) order.push(i);
  for (let i = 0; i < view.count; i++) if (!order.includes(i)) order.push(i);
  return order;
}

/**
 * Power of two choices: two distinct random providers among the healthy ones;
 * fewer visits in flight wins, then lower latency (unknown counts as lowest).
 * The loser follows, then the other healthy providers and then the rest, in
 * registration order, for failover.
 */
function powerOfTwoOrder(view: ProviderView, random: RandomSource): number[] {
  const healthy = healthyProviders(view);
  const pair = drawTwo(healthy, random);
  if (pair === undefined) return thenTheRest(view, healthy, [...healthy]);
  const [a, b] = pair;
  return thenTheRest(view, healthy, isBetter(view, b, a) ? [b, a] : [a, b]);
}

function isBetter(view: ProviderView, x: number, y: number): boolean {
  const lx = view.load(x).inflight;
  const ly = view.load(y).inflight;
  if (lx !== ly) return lx < ly;
  return (view.latency(x) ?? -1) < (view.latency(y) ?? -1);
}

/**
 * Least loaded of two random choices: of two distinct random healthy
 * providers, the one with the lower cost — peak-EWMA latency × (visits in
 * flight + 1) — goes first (on equal costs, the one with fewer visits in
 * flight; on a full tie, the first drawn, itself random), the
 * other second, then the other healthy providers and then the rest, in
 * registration order, for failover.
 */
function leastLoadedOrder(view: ProviderView, random: RandomSource): number[] {
  const healthy = healthyProviders(view);
  const pair = drawTwo(healthy, random);
  if (pair === undefined) return thenTheRest(view, healthy, [...healthy]);
  const [a, b] = pair;
  const now = view.clock();
  const [la, lb] = [view.load(a), view.load(b)];
  const [ca, cb] = [la.cost(now), lb.cost(now)];
  // Equal costs (a latency of 0 makes every load cost 0): fewer visits in flight wins.
  const second = cb < ca || (cb === ca && lb.inflight < la.inflight);
  return thenTheRest(view, healthy, second ? [b, a] : [a, b]);
}
