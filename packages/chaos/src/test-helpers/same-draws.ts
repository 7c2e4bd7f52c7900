import { expect } from 'vitest';

/**
 * Asserts the fault draws of a chaos server with a 50% failure rate: two clients
 * meet the same failures for the same call index and attempt, and the second
 * attempt of each call draws on its own. `failedOf(lane)` sends calls `lane-0`
 * … `lane-99` once each and says which failed; `attempts(id)` is what the server
 * counted for a call id.
 */
export async function expectSameDrawsPerCall(
  lanes: readonly [string, string],
  failedOf: (lane: string) => Promise<boolean[]>,
  attempts: (callId: string) => number,
): Promise<void> {
  const [one, other] = lanes;
  const first = await failedOf(one);
  // Another client, after other traffic: call #i's first attempt meets the same fault.
  expect(await failedOf(other)).toEqual(first);
  // Second attempts (the server counts 2 for each id): an independent draw, not the first one's.
  const second = await failedOf(one);
  expect(second).not.toEqual(first);
  const both = first.filter((failed, i) => failed && second[i]).length;
  expect(both).toBeGreaterThan(10);
  expect(both).toBeLessThan(40);
  expect(attempts(`${one}-7`)).toBe(2);
  // The other client's second attempts meet the same draws again.
  expect(await failedOf(other)).toEqual(second);
}
