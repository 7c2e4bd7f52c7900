import { describe, expect, it } from 'vitest';
import { isThrottledError } from '../errors/throttled-error.js';
import { createAdaptiveThrottle } from '../limit/adaptive-throttle.js';
import { createManualClock } from '../time/manual-clock.js';
import { fixedRandom } from '../time/random.js';
import { protect } from './protect.js';

describe('protect: adaptive throttle', () => {
  it('rejects locally without running once the backend stops accepting, with a fallback at once', async () => {
    const clock = createManualClock();
    const throttle = createAdaptiveThrottle({ k: 1, clock, random: fixedRandom(0) });
    const run = protect({ throttle, clock });
    for (let i = 0; i < 5; i++)
      await run(() => Promise.reject(new Error('overloaded'))).catch(() => {});
    expect(throttle.probability()).toBeGreaterThan(0);
    let ran = false;
    const error = await run(() => {
      ran = true;
    }).catch((e: unknown) => e);
    expect(isThrottledError(error)).toBe(true);
    expect(ran).toBe(false);
    await expect(run(() => 'x', { fallback: () => 'fb' })).resolves.toBe('fb');
  });

  it('successes and countForCircuit:false errors count as accepts', async () => {
    const throttle = createAdaptiveThrottle({ k: 1, random: fixedRandom(0) });
    const run = protect({ throttle, classify: () => ({ countForCircuit: false }) });
    await run(() => 'ok');
    await run(() => Promise.reject(new Error('not found'))).catch(() => {});
    expect(throttle.stats()).toMatchObject({ requests: 2, accepts: 2 });
  });
});
