import { describe, expect, it } from 'vitest';
import { STANDARD_RESILIENCE } from '../attempts/resilience-options.js';
import { createManualClock } from '../time/manual-clock.js';
import { protect } from './protect.js';

const TICK_MS = 10;

/**
 * The standard circuit (and retries, budget, deadlines) through `protect`, on
 * the manual clock: a call every 10 ms (100 calls/s, open loop), an upstream
 * that fails every attempt for `outageMs`, then answers again.
 */
async function outage(outageMs: number) {
  const clock = createManualClock(0);
  const run = protect({ ...STANDARD_RESILIENCE, clock, sleep: clock.sleep, random: () => 0.5 });
  let up = true;
  let attempts = 0;
  const outcomes: Array<{ at: number; ok: boolean; settledAt: number }> = [];
  const pending: Promise<void>[] = [];
  const attemptTimes: number[] = [];
  const call = () => {
    const at = clock.now;
    const record = { at, ok: false, settledAt: Number.NaN };
    outcomes.push(record);
    pending.push(
      run(() => {
        attempts++;
        attemptTimes.push(clock.now);
        return up ? Promise.resolve('ok') : Promise.reject(new Error('down'));
      }).then(
        () => {
          record.ok = true;
          record.settledAt = clock.now;
        },
        () => {
          record.settledAt = clock.now;
        },
      ),
    );
  };
  const drive = async (ms: number) => {
    for (let t = 0; t < ms; t += TICK_MS) {
      call();
      await clock.advanceAsync(TICK_MS);
    }
  };
  await drive(500);
  up = false;
  const down = clock.now;
  await drive(outageMs);
  up = true;
  const back = clock.now;
  await drive(2_000);
  await Promise.all(pending);
  // Once tripped (1.5 s in: 5 failures spanning 500 ms, each call with its retries).
  const tripped = down + 1_500;
  const inOutage = outcomes.filter((o) => o.at >= tripped && o.at < back);
  const outageAttempts = attemptTimes.filter((t) => t >= tripped && t < back).length;
  const firstOk = Math.min(...outcomes.filter((o) => o.ok && o.at >= back).map((o) => o.settledAt));
  const late = outcomes.filter((o) => o.at >= back + 500);
  const firstSecond = attemptTimes.filter((t) => t >= back && t < back + 1_000).length;
  return {
    perCall: outageAttempts / inOutage.length,
    firstOkMs: firstOk - back,
    okFrom500: late.filter((o) => o.ok).length / late.length,
    firstSecondRate: firstSecond / (1_000 / TICK_MS),
    attempts,
  };
}

describe('recovery with the standard circuit (manual clock)', () => {
  it('a 2 s and a 60 s outage: <= 0.2 attempts per call, first success within 250 ms, >= 99% from 500 ms', async () => {
    const short = await outage(2_000);
    const long = await outage(60_000);
    for (const r of [short, long]) {
      expect(r.perCall).toBeLessThanOrEqual(0.2);
      expect(r.firstOkMs).toBeLessThanOrEqual(250);
      expect(r.okFrom500).toBeGreaterThanOrEqual(0.99);
      // The upstream's first second back: no more than 1.5x the offered rate.
      expect(r.firstSecondRate).toBeLessThanOrEqual(1.5);
    }
    // The probe cadence does not stretch with the outage: recovery takes as long after 60 s as after 2 s.
    expect(Math.abs(long.firstOkMs - short.firstOkMs)).toBeLessThanOrEqual(200);
  }, 60_000);
});
