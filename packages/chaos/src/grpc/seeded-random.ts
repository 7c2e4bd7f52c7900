import type { RandomSource } from '@breakwater/core/time';

/**
 * A deterministic {@link RandomSource} (mulberry32) for reproducible fault
 * schedules: the same seed gives the same sequence of numbers in `[0, 1)`.
 */
export function seededRandom(seed: number): RandomSource {
  if (typeof seed !== 'number' || !Number.isFinite(seed)) {
    throw new TypeError(`seededRandom(seed) must be a finite number, got ${String(seed)}`);
  }
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The part of a call id that names the call across clients: the call index
 * that `runScenario` puts after the client's name (`"grpc/usual-17"` → `"17"`),
 * or the whole id when it does not end in `-<digits>`.
 */
export function callKey(callId: string): string {
  const match = /-(\d+)$/.exec(callId);
  return match?.[1] ?? callId;
}

/**
 * The random numbers of one attempt, decided by `(seed, call, attempt)` alone:
 * every client that sends call #i's n-th attempt to a server with this seed meets
 * the same faults, whatever it sent before, and each attempt of a call gets its own
 * independent draw (so a retry is not doomed by the first attempt's fault).
 */
export function attemptRandom(seed: number, callId: string, attempt: number): RandomSource {
  // FNV-1a over the key, mixed with the seed: a different start for every attempt.
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (const ch of `${callKey(callId)}#${attempt}`) {
    hash = Math.imul(hash ^ (ch.codePointAt(0) ?? 0), 0x01000193);
  }
  return seededRandom(hash >>> 0);
}

/**
 * Where a chaos server's attempts draw their faults from: an injected `random`
 * serves every attempt; otherwise an attempt with a call id gets
 * {@link attemptRandom} and the rest share one sequence seeded with `seed`.
 * @internal
 */
export function faultRandomness(
  seed: number,
  injected: RandomSource | undefined,
): (callId: string | undefined, attempt: number) => RandomSource {
  const shared = injected ?? seededRandom(seed);
  return (callId, attempt) =>
    injected !== undefined || callId === undefined ? shared : attemptRandom(seed, callId, attempt);
}
