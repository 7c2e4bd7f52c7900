import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tick } from '../test-helpers/async.js';
import { createManualClock } from '../time/manual-clock.js';
import { type CacheOptions, createCache } from './cache.js';

function setup(options: Partial<CacheOptions> = {}) {
  const clock = createManualClock(0);
  const cache = createCache<string, number>({ maxSize: 10, clock, ...options });
  return { clock, cache };
}

function controlledLoader() {
  const calls: string[] = [];
  const pending: Array<{ resolve: (v: number) => void; reject: (e: unknown) => void }> = [];
  const loader = (key: string) => {
    calls.push(key);
    return new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { loader, calls, pending };
}

describe('createCache', () => {
  it('reports fresh, then stale inside the SWR window, then expired', () => {
    const { clock, cache } = setup({ ttlMs: 100, staleWhileRevalidateMs: 50 });
    cache.set('a', 1);
    clock.advance(99);
    expect(cache.get('a')).toEqual({ hit: true, status: 'fresh', value: 1 });
    clock.advance(1);
    expect(cache.get('a')).toEqual({ hit: true, status: 'stale', value: 1 });
    clock.advance(49);
    expect(cache.get('a')).toEqual({ hit: true, status: 'stale', value: 1 });
    clock.advance(1);
    expect(cache.get('a')).toEqual({ hit: false, status: 'expired' });
    expect(cache.size).toBe(0);
    expect(cache.get('never-set')).toEqual({ hit: false, status: 'expired' });
    expect(cache.stats()).toMatchObject({ hits: 1, staleHits: 2, misses: 2, expirations: 1 });
  });

  it('without ttlMs entries never expire; without SWR they expire at ttlMs', () => {
    const forever = setup();
    forever.cache.set('a', 1);
    forever.clock.advance(1e12);
    expect(forever.cache.get('a').status).toBe('fresh');
    const { clock, cache } = setup({ ttlMs: 10 });
    cache.set('a', 1);
    cache.set('b', 2, { ttlMs: 100 });
    clock.advance(10);
    expect(cache.get('a').status).toBe('expired');
    expect(cache.get('b').status).toBe('fresh');
  });

  it('evicts the least recently used entry beyond maxSize', () => {
    const { cache } = setup({ maxSize: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a'); // a is now the most recent
    cache.set('c', 3);
    expect(cache.get('b').hit).toBe(false);
    expect(cache.get('a').hit).toBe(true);
    expect(cache.get('c').hit).toBe(true);
    cache.set('c', 30); // overwriting is not an eviction
    expect(cache.stats()).toMatchObject({ size: 2, evictions: 1 });
  });

  it('property: size stays within maxSize and matches a reference LRU', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 9 })), { maxLength: 100 }),
        (maxSize, ops) => {
          const { cache } = setup({ maxSize });
          const ref: string[] = [];
          for (const [isSet, k] of ops) {
            const key = `k${k}`;
            const i = ref.indexOf(key);
            if (isSet) {
              cache.set(key, k);
              if (i >= 0) ref.splice(i, 1);
              ref.push(key);
              if (ref.length > maxSize) ref.shift();
            } else {
              expect(cache.get(key).hit).toBe(i >= 0);
              if (i >= 0) ref.push(...ref.splice(i, 1));
            }
            expect(cache.size).toBe(ref.length);
          }
        },
      ),
    );
  });

  it('delete and clear remove entries', () => {
    const { cache } = setup();
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.delete('a')).toBe(true);
    expect(cache.delete('a')).toBe(false);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.get('b').hit).toBe(false);
  });

  it('getOrLoad coalesces concurrent loads of one key into one loader call', async () => {
    const { cache } = setup();
    const { loader, calls, pending } = controlledLoader();
    const gets = Array.from({ length: 5 }, () => cache.getOrLoad('a', loader));
    const other = cache.getOrLoad('b', loader);
    expect(calls).toEqual(['a', 'b']);
    pending[0]?.resolve(42);
    pending[1]?.resolve(7);
    await expect(Promise.all(gets)).resolves.toEqual([42, 42, 42, 42, 42]);
    await expect(other).resolves.toBe(7);
    await expect(cache.getOrLoad('a', loader)).resolves.toBe(42);
    expect(calls).toHaveLength(2);
    expect(cache.stats()).toMatchObject({ loads: 2, hits: 1 });
  });

  it('loader errors reach every waiter and are not cached', async () => {
    const { cache } = setup();
    const { loader, calls, pending } = controlledLoader();
    const a = cache.getOrLoad('a', loader);
    const b = cache.getOrLoad('a', loader);
    pending[0]?.reject(new Error('down'));
    await expect(a).rejects.toThrow('down');
    await expect(b).rejects.toThrow('down');
    const sync = cache.getOrLoad('a', () => {
      throw new Error('sync');
    });
    await expect(sync).rejects.toThrow('sync');
    const again = cache.getOrLoad('a', loader);
    pending[1]?.resolve(1);
    await expect(again).resolves.toBe(1);
    expect(calls).toEqual(['a', 'a']);
    expect(cache.stats()).toMatchObject({ loads: 3, loadFailures: 2 });
  });

  it('serves a stale entry at once and refreshes it in the background exactly once', async () => {
    const { clock, cache } = setup({ ttlMs: 100, staleWhileRevalidateMs: 1000 });
    const { loader, calls, pending } = controlledLoader();
    cache.set('a', 1);
    clock.advance(150);
    const served = await Promise.all([1, 2, 3].map(() => cache.getOrLoad('a', loader)));
    expect(served).toEqual([1, 1, 1]);
    expect(calls).toEqual(['a']);
    pending[0]?.resolve(2);
    await tick();
    expect(cache.get('a')).toEqual({ hit: true, status: 'fresh', value: 2 });
    clock.advance(99);
    await expect(cache.getOrLoad('a', loader)).resolves.toBe(2);
    expect(calls).toHaveLength(1);
  });

  it('a failed refresh keeps the stale value and surfaces no rejection', async () => {
    const { clock, cache } = setup({ ttlMs: 100, staleWhileRevalidateMs: 1000 });
    const { loader, calls, pending } = controlledLoader();
    cache.set('a', 1);
    clock.advance(200);
    await expect(cache.getOrLoad('a', loader)).resolves.toBe(1);
    pending[0]?.reject(new Error('refresh failed'));
    await tick(); // an unhandled rejection here would fail the test run
    expect(cache.get('a')).toEqual({ hit: true, status: 'stale', value: 1 });
    expect(cache.stats().loadFailures).toBe(1);
    await expect(cache.getOrLoad('a', loader)).resolves.toBe(1);
    expect(calls).toHaveLength(2); // the next stale read may try again
  });

  it('a caller past the stale window joins the refresh already in flight', async () => {
    const { clock, cache } = setup({ ttlMs: 100, staleWhileRevalidateMs: 100 });
    const { loader, calls, pending } = controlledLoader();
    cache.set('a', 1);
    clock.advance(150);
    await expect(cache.getOrLoad('a', loader)).resolves.toBe(1);
    clock.advance(100);
    const late = cache.getOrLoad('a', loader);
    pending[0]?.resolve(2);
    await expect(late).resolves.toBe(2);
    expect(calls).toHaveLength(1);
  });

  it('set or delete during a load keeps the newer state', async () => {
    const { cache } = setup();
    const { loader, pending } = controlledLoader();
    const loading = cache.getOrLoad('a', loader);
    cache.set('a', 99);
    pending[0]?.resolve(1);
    await expect(loading).resolves.toBe(1);
    expect(cache.get('a')).toMatchObject({ value: 99 });
    const again = cache.getOrLoad('b', loader);
    cache.delete('b');
    pending[1]?.resolve(5);
    await again;
    expect(cache.get('b').hit).toBe(false);
  });

  it('validates its options, naming them', () => {
    const make = (o: object) => () => createCache(o as never);
    expect(make({ maxSize: 0 })).toThrow(/maxSize.*0/);
    expect(make({ maxSize: Number.NaN })).toThrow(TypeError);
    expect(make({ maxSize: 1, ttlMs: 0 })).toThrow(/ttlMs/);
    expect(make({ maxSize: 1, ttlMs: 10, staleWhileRevalidateMs: -1 })).toThrow(
      /staleWhileRevalidateMs.*-1/,
    );
    expect(make({ maxSize: 1, clock: 1 })).toThrow(/clock/);
    expect(() => setup().cache.set('a', 1, { ttlMs: -5 })).toThrow(/ttlMs.*-5/);
  });
});
