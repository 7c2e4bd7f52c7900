import type { BackoffConfig } from './options.js';

/**
 * The delay before attempt `attempt + 1`, after `attempt` failed attempts
 * (`attempt >= 1`). Exponential starts at `delayMs` and doubles; jitter only
 * ever reduces: `delay × (1 − jitter × random())`.
 * @internal
 */
export function backoffDelay(config: BackoffConfig, attempt: number, random: () => number): number {
  let delay = config.delayMs;
  // 2^1023 is the last finite power; later attempts stay at the cap or the largest finite delay.
  if (config.exponential) delay *= 2 ** Math.min(attempt - 1, 1023);
  if (delay > config.maxDelayMs) delay = config.maxDelayMs;
  if (!Number.isFinite(delay)) delay = Number.MAX_VALUE;
  if (config.jitter > 0) delay *= 1 - config.jitter * random();
  return delay;
}
