import {
  checkKeys,
  checkNumber,
  checkObject,
  checkOneOf,
  optionTypeError,
} from '../internal/validate.js';
import type { RandomSource } from '../time/random.js';
import {
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
  /** Visits in flight right now. */
  inflight(index: number): number;
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
  'race',
];

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
  const spec: RouteSelection =
    selection === undefined
      ? { type: 'priority' }
      : typeof selection === 'string'
        ? ({ type: selection } as RouteSelection)
        : selection;
  checkObject('selection', spec, false);
  const type = checkOneOf('selection.type', spec.type, SELECTIONS);
  const keys = type === 'priority' ? PRIORITY_SELECTION_KEYS : PLAIN_SELECTION_KEYS;
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
 * Power of two choices: two distinct random providers among the healthy ones;
 * fewer visits in flight wins, then lower latency (unknown counts as lowest).
 * The loser follows, then everyone else in registration order for failover.
 */
function powerOfTwoOrder(view: ProviderView, random: RandomSource): number[] {
  const n = view.count;
  const healthy: number[] = [];
  for (let i = 0; i < n; i++) if (view.healthy(i)) healthy.push(i);
  if (healthy.length < 2) return range(n);
  const a = healthy[Math.floor(random() * healthy.length)] as number;
  let b = healthy[Math.floor(random() * (healthy.length - 1))] as number;
  if (b === a) b = healthy[healthy.length - 1] as number;
  const better = isBetter(view, b, a) ? b : a;
  const worse = better === a ? b : a;
  const order = [better, worse];
  for (let i = 0; i < n; i++) if (i !== a && i !== b) order.push(i);
  return order;
}

function isBetter(view: ProviderView, x: number, y: number): boolean {
  const lx = view.inflight(x);
  const ly = view.inflight(y);
  if (lx !== ly) return lx < ly;
  return (view.latency(x) ?? -1) < (view.latency(y) ?? -1);
}
