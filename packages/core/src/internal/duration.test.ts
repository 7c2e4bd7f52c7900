import { describe, expect, it } from 'vitest';
import { withTimeout } from '../deadline/with-timeout.js';
import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { protect } from '../protect/protect.js';
import { parseDuration } from './duration.js';

const OVERFLOW = `${'9'.repeat(400)}ms`;

describe('parseDuration', () => {
  it('parses numbers and unit strings', () => {
    expect(parseDuration('d', 5)).toBe(5);
    expect(parseDuration('d', '250ms')).toBe(250);
    expect(parseDuration('d', '1.5s')).toBe(1500);
    expect(parseDuration('d', '2m')).toBe(120_000);
  });

  it('rejects a string that overflows to Infinity with a RangeError naming the option', () => {
    for (const value of [OVERFLOW, `${'9'.repeat(400)}s`, `${'9'.repeat(320)}m`]) {
      expect(() => parseDuration('retry.timeout', value)).toThrow(RangeError);
      expect(() => parseDuration('retry.timeout', value)).toThrow(
        /retry\.timeout.*must be a finite duration/,
      );
    }
    expect(() => parseDuration('d', Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => parseDuration('d', Number.NaN)).toThrow(RangeError);
  });

  it('protect and withTimeout refuse an overflowing duration at the call site, naming it', async () => {
    // protect takes ms numbers only: a duration string is a TypeError naming the option.
    expect(() => protect({ attemptTimeoutMs: OVERFLOW as never })).toThrow(TypeError);
    expect(() => protect({ attemptTimeoutMs: OVERFLOW as never })).toThrow(/attemptTimeoutMs/);
    expect(() => withTimeout(async () => 1, { timeoutMs: OVERFLOW as '1ms' })).toThrow(
      /timeoutMs.*finite/,
    );
    // Nothing reached the process-wide wheel: other deadlines still fire.
    const error = await withTimeout(() => new Promise(() => {}), { timeoutMs: 10 }).catch(
      (e: unknown) => e,
    );
    expect(isDeadlineExceededError(error)).toBe(true);
  });
});
