import type { ProtectRunner } from '../protect/types.js';
import type { ManualClock } from '../time/manual-clock.js';

/**
 * Runs one call of `run` whose every attempt fails with `Error('boom')`, on
 * the manual `clock`; resolves with the clock time of each attempt and the
 * call's final error.
 * @internal
 */
export async function attemptTimes(
  run: ProtectRunner,
  clock: ManualClock,
): Promise<{ at: number[]; error: unknown }> {
  const at: number[] = [];
  const error = await clock
    .run(
      run(() => {
        at.push(clock());
        throw new Error('boom');
      }),
    )
    .catch((e: unknown) => e);
  return { at, error };
}
