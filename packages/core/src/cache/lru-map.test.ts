import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LruMap } from './lru-map.js';

describe('LruMap', () => {
  it('evicts the least recently used entry and says so', () => {
    const lru = new LruMap<string, number>(2);
    expect(lru.set('a', 1)).toBe(false);
    expect(lru.set('b', 2)).toBe(false);
    expect(lru.get('a')).toBe(1);
    expect(lru.set('c', 3)).toBe(true);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.set('a', 10)).toBe(false); // overwrite promotes, never evicts
    expect(lru.set('d', 4)).toBe(true); // c was the oldest
    expect([lru.get('a'), lru.get('c'), lru.get('d')]).toEqual([10, undefined, 4]);
    lru.clear();
    expect(lru.size).toBe(0);
    expect(lru.set('e', 5)).toBe(false);
  });

  it('property: behaves like a reference LRU under get/set/delete', () => {
    const op = fc.tuple(fc.constantFrom('get', 'set', 'delete'), fc.integer({ min: 0, max: 7 }));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 150 }), (max, ops) => {
        const lru = new LruMap<number, number>(max);
        let ref: Array<[number, number]> = [];
        ops.forEach(([kind, key], step) => {
          const i = ref.findIndex(([k]) => k === key);
          const found = i >= 0 ? ref.splice(i, 1)[0] : undefined;
          if (kind === 'get') {
            expect(lru.get(key)).toBe(found?.[1]);
            if (found) ref.push(found);
          } else if (kind === 'set') {
            ref.push([key, step]);
            const evicted = ref.length > max;
            if (evicted) ref = ref.slice(1);
            expect(lru.set(key, step)).toBe(evicted);
          } else {
            expect(lru.delete(key)).toBe(found !== undefined);
          }
          expect(lru.size).toBe(ref.length);
        });
      }),
    );
  });
});
