import { saneClock } from '../internal/sane-clock.js';
import {
  checkFunction,
  checkNumber,
  checkOptions,
  keysOf,
  optionalNumber,
} from '../internal/validate.js';
import type { Clock } from '../time/clock.js';
import { LruMap } from './lru-map.js';

/** Options of {@link createCache}. */
export interface CacheOptions {
  /** Most entries kept; the least recently used is evicted beyond it. Required, integer >= 1. */
  maxSize: number;
  /** How long an entry is fresh after `set`, in ms. Defaults to `Infinity` (never expires). */
  ttlMs?: number;
  /**
   * How long after turning stale an entry may still be served (as `'stale'`)
   * while `getOrLoad` refreshes it in the background. Defaults to 0.
   */
  staleWhileRevalidateMs?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link CacheOptions}. @internal */
export const CACHE_KEYS = keysOf<CacheOptions>()([
  'maxSize',
  'ttlMs',
  'staleWhileRevalidateMs',
  'clock',
]);

/** What `get` found. A plain miss reports `'expired'` too: there is nothing usable either way. */
export type CacheLookup<V> =
  | {
      /** True: an entry was found and may be used. */
      readonly hit: true;
      /** `'fresh'` within its TTL, `'stale'` inside the stale-while-revalidate window. */
      readonly status: 'fresh' | 'stale';
      /** The cached value. */
      readonly value: V;
    }
  | {
      /** False: nothing usable was found. */
      readonly hit: false;
      /** Always `'expired'`, for an absent key as well as one past its stale window. */
      readonly status: 'expired';
    };

/** Counters of a {@link Cache}, since it was created. */
export interface CacheStats {
  /** Entries held now. */
  size: number;
  /** Lookups that found a fresh entry. */
  hits: number;
  /** Lookups that found a stale entry inside its stale-while-revalidate window. */
  staleHits: number;
  /** Lookups that found nothing usable (absent or expired). */
  misses: number;
  /** Entries dropped to stay within `maxSize`. */
  evictions: number;
  /** Entries dropped because a lookup found them past their stale window. */
  expirations: number;
  /** Loader calls started by `getOrLoad`, background refreshes included. */
  loads: number;
  /** Loader calls that failed (their error was not cached). */
  loadFailures: number;
}

/** Loads the value for a key on a `getOrLoad` miss or refresh. */
export type CacheLoader<K, V> = (key: K) => V | PromiseLike<V>;

/** An LRU cache with TTL, stale-while-revalidate and coalesced loading. */
export interface Cache<K, V> {
  /** Looks `key` up and marks a usable entry most recently used. */
  get(key: K): CacheLookup<V>;
  /** Stores `value` as fresh (for `ttlMs`, overridable per entry) and most recently used. */
  set(
    key: K,
    value: V,
    options?: {
      /** How long this entry is fresh, in ms. Defaults to the cache's `ttlMs`. */
      ttlMs?: number;
    },
  ): void;
  /** Removes `key`; a load in flight for it will not store its result. True if it was present. */
  delete(key: K): boolean;
  /** Removes every entry; loads in flight will not store their results. */
  clear(): void;
  /**
   * Returns the fresh value, or loads it. Concurrent calls for one key share
   * one loader call. A stale entry (inside the stale-while-revalidate window)
   * is returned at once while one background refresh runs; a failed refresh
   * keeps the stale value and is never an unhandled rejection. Loader errors
   * reject the waiting calls and are not cached.
   */
  getOrLoad(key: K, loader: CacheLoader<K, V>): Promise<V>;
  /** Entries held now (expired ones linger until looked up or evicted). */
  readonly size: number;
  /** A snapshot of the counters. */
  stats(): CacheStats;
}

interface Entry<V> {
  value: V;
  /** Fresh before this time. */
  freshUntil: number;
  /** Usable (stale) before this time. */
  staleUntil: number;
}

interface Load<V> {
  promise: Promise<V>;
  /** Cleared by `set`/`delete`/`clear`, so an outdated load does not overwrite newer state. */
  store: boolean;
}

const MISS: CacheLookup<never> = Object.freeze({ hit: false, status: 'expired' });

/**
 * Creates an LRU cache. O(1) per operation (a `Map` plus a recency-ordered
 * linked list). Expiry is checked lazily on lookup; there are no timers.
 * @example
 * const users = createCache<string, User>({ maxSize: 1000, ttlMs: 30_000, staleWhileRevalidateMs: 60_000 });
 * const user = await users.getOrLoad(id, (id) => api.getUser(id));
 */
export function createCache<K, V>(options: CacheOptions): Cache<K, V> {
  checkOptions('createCache', options, CACHE_KEYS, '', false);
  const maxSize = checkNumber('maxSize', options.maxSize, { min: 1, integer: true });
  const inf = Number.POSITIVE_INFINITY;
  const ttlMs = optionalNumber('ttlMs', options.ttlMs, inf, { above: 0, allowInfinity: true });
  const swrMs = optionalNumber('staleWhileRevalidateMs', options.staleWhileRevalidateMs, 0, {
    min: 0,
    allowInfinity: true,
  });
  checkFunction('clock', options.clock);
  const clock = saneClock(options.clock);
  const entries = new LruMap<K, Entry<V>>(maxSize);
  const loads = new Map<K, Load<V>>();
  const s = { hits: 0, staleHits: 0, misses: 0, evictions: 0, expirations: 0 };
  let loadCount = 0;
  let loadFailures = 0;

  const forgetLoad = (key: K) => {
    const load = loads.get(key);
    if (load) {
      load.store = false;
      loads.delete(key);
    }
  };

  const set = (key: K, value: V, ttl: number) => {
    const freshUntil = clock() + ttl;
    if (entries.set(key, { value, freshUntil, staleUntil: freshUntil + swrMs })) s.evictions++;
  };

  const startLoad = (key: K, loader: CacheLoader<K, V>): Load<V> => {
    loadCount++;
    const load: Load<V> = { promise: undefined as never, store: true };
    // Registered before the loader runs, so a loader that throws synchronously still unregisters.
    loads.set(key, load);
    load.promise = (async () => {
      try {
        const value = await loader(key);
        if (load.store) set(key, value, ttlMs);
        return value;
      } catch (e) {
        loadFailures++;
        throw e;
      } finally {
        if (loads.get(key) === load) loads.delete(key);
      }
    })();
    return load;
  };

  const get = (key: K): CacheLookup<V> => {
    const entry = entries.get(key);
    if (entry === undefined) {
      s.misses++;
      return MISS;
    }
    const now = clock();
    if (now >= entry.staleUntil) {
      entries.delete(key);
      s.expirations++;
      s.misses++;
      return MISS;
    }
    if (now < entry.freshUntil) {
      s.hits++;
      return { hit: true, status: 'fresh', value: entry.value };
    }
    s.staleHits++;
    return { hit: true, status: 'stale', value: entry.value };
  };

  return {
    get,
    set(key, value, entryOptions) {
      const ttl =
        entryOptions?.ttlMs === undefined
          ? ttlMs
          : checkNumber('ttlMs', entryOptions.ttlMs, { above: 0, allowInfinity: true });
      forgetLoad(key);
      set(key, value, ttl);
    },
    delete(key) {
      forgetLoad(key);
      return entries.delete(key);
    },
    clear() {
      for (const load of loads.values()) load.store = false;
      loads.clear();
      entries.clear();
    },
    async getOrLoad(key, loader) {
      const found = get(key);
      if (found.hit) {
        if (found.status === 'stale' && !loads.has(key)) {
          // Background refresh: its failure keeps the stale value and must not surface.
          startLoad(key, loader).promise.catch(() => {});
        }
        return found.value;
      }
      const pending = loads.get(key);
      return (pending ?? startLoad(key, loader)).promise;
    },
    get size() {
      return entries.size;
    },
    stats() {
      return { size: entries.size, ...s, loads: loadCount, loadFailures };
    },
  };
}
