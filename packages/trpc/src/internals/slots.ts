import type { Pool } from '@breakwater/core';

/**
 * The synchronous slot hand-off of core's pools, made for core's own runners
 * and internal to core (so found by shape; this package does not depend on
 * the gRPC adapter that has the same check): take a free slot, give it back.
 * @internal
 */
export type SlotHandOff = Pool & { tryTake(): boolean; give(ok: boolean): void };

/** `pool` when it has the hand-off, else `undefined` (a pool of another make). @internal */
export function slotHandOff(pool: Pool): SlotHandOff | undefined {
  const p = pool as Partial<SlotHandOff>;
  return typeof p.tryTake === 'function' && typeof p.give === 'function'
    ? (pool as SlotHandOff)
    : undefined;
}
