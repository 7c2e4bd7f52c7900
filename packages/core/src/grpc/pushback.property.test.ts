import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AttemptEngine, STOP_PUSHBACK } from '../attempts/engine.js';
import { createBackoff } from '../retry/backoff.js';
import { classifyGrpcStatus, PUSHBACK_TRAILER } from './classifier.js';
import { GrpcStatus } from './status.js';

// A backoff no pushback can mean: a failure given it shows the trailer was ignored.
const engine = new AttemptEngine({
  attempts: 3,
  backoff: createBackoff({ baseDelayMs: 777, strategy: 'linear', jitter: 'none' }),
  clock: () => 0,
});

/** What the first retry of a call failing with `code` and trailer `grpc-retry-pushback-ms: value` does. */
function afterPushback(value: string, code: number): number {
  const trailer = (key: string) => (key === PUSHBACK_TRAILER ? value : undefined);
  const verdict = classifyGrpcStatus(code, trailer);
  return engine.afterFailure(1, 0, verdict, new Error('failed'), Number.POSITIVE_INFINITY);
}

const ows = fc.constantFrom('', ' ', '\t', '  ');
const whitespace = fc.constantFrom('\u00a0', '\u2028', '\ufeff', '\n', '\r', '\v', '\u3000');
const values = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.tuple(ows, fc.stringMatching(/^\d{1,25}$/), ows).map(([a, d, b]) => `${a}${d}${b}`),
  // Digits behind other whitespace: not the whole number the trailer must be.
  fc
    .tuple(whitespace, fc.stringMatching(/^\d{1,6}$/), fc.boolean())
    .map(([w, d, before]) => (before ? `${w}${d}` : `${d}${w}`)),
  fc
    .tuple(
      fc.constantFrom('', '+', '-', ' -', '0x'),
      fc.double(),
      fc.constantFrom('', 'ms', '.0', 'e3'),
    )
    .map(([sign, n, unit]) => `${sign}${n}${unit}`),
  fc.constantFrom(
    '',
    ' ',
    '-0',
    '+0',
    '0.0',
    '1e3',
    'Infinity',
    'NaN',
    '٣',
    '５',
    '1_000',
    '1,000',
  ),
);

describe('grpc-retry-pushback-ms: every value is a documented delay or stops the retries (fuzz)', () => {
  it('a whole number of ms (spaces or tabs around it) up to maxPushbackMs is the delay; anything else stops; only 0 retries at once', () => {
    fc.assert(
      fc.property(
        values,
        fc.constantFrom(GrpcStatus.UNAVAILABLE, GrpcStatus.RESOURCE_EXHAUSTED),
        (value, code) => {
          const outcome = afterPushback(value, code);
          const text = value.replace(/^[ \t]+|[ \t]+$/g, '');
          if (!/^\d+$/.test(text)) {
            // RESOURCE_EXHAUSTED without a valid pushback is not retried at all.
            expect(outcome < 0).toBe(true);
            expect(outcome === STOP_PUSHBACK || code === GrpcStatus.RESOURCE_EXHAUSTED).toBe(true);
            return;
          }
          const ms = Number(text);
          expect(outcome).toBe(ms <= 30_000 ? ms : STOP_PUSHBACK);
          if (outcome === 0) expect(text).toMatch(/^0+$/);
        },
      ),
      { seed: 29, numRuns: 5_000 },
    );
  });
});
