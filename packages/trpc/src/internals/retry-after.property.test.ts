import { createBackoff } from '@breakwater/core';
import { AttemptEngine, STOP_PUSHBACK } from '@breakwater/core/internal';
import { TRPCClientError } from '@trpc/client';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTRPCErrorClassifier } from '../classify.js';

// A quarter second past a whole second: a date one second ahead is 750 ms away.
const NOW = Date.UTC(2030, 0, 1, 12, 0, 0) + 250;
const classify = createTRPCErrorClassifier({ clock: () => NOW });
// A backoff no Retry-After can mean: a failure given it shows the header was ignored.
const engine = new AttemptEngine({
  attempts: 3,
  backoff: createBackoff({ baseDelayMs: 777, strategy: 'linear', jitter: 'none' }),
  clock: () => NOW,
});

/** What the first retry of a 503 (or 429) carrying `Retry-After: value` does: its delay, or a stop. */
function afterRetryAfter(value: string, status: 503 | 429): number {
  const response = {
    status,
    headers: { get: (n: string) => (n === 'retry-after' ? value : null) },
  };
  const code = status === 503 ? 'SERVICE_UNAVAILABLE' : 'TOO_MANY_REQUESTS';
  const error = TRPCClientError.from(
    { error: { code: -32603, message: code, data: { code, httpStatus: status } } },
    { meta: { response } },
  );
  return engine.afterFailure(1, 0, classify(error), error, Number.POSITIVE_INFINITY);
}

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
const DAYS = 'Sunday Monday Tuesday Wednesday Thursday Friday Saturday'.split(' ');
const two = (n: number) => String(n).padStart(2, '0');
const clockTime = (d: Date) =>
  `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;

/** The three HTTP-date forms of RFC 9110 §5.6.7, written out here independently of the parser. */
const FORMS: Record<string, (d: Date) => string> = {
  imf: (d) => d.toUTCString(),
  rfc850: (d) =>
    `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${two(d.getUTCFullYear() % 100)} ${clockTime(d)} GMT`,
  asctime: (d) =>
    `${DAYS[d.getUTCDay()]?.slice(0, 3)} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${clockTime(d)} ${d.getUTCFullYear()}`,
};

/** `value` without the optional whitespace around a header value. */
const bare = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, '');

/** A date the value may stand for, to the second, from a day back to a minute ahead. */
const dates = fc
  .integer({ min: -86_400, max: 60 })
  .map((s) => new Date(Math.floor(NOW / 1000) * 1000 + s * 1000));

const ows = fc.constantFrom('', ' ', '\t', '  ');
const junk = fc.constantFrom(
  'later 5',
  'in 5 seconds',
  'soon',
  'Tomorrow',
  'now',
  '2030-01-01T12:00:05Z',
  '2030-01-01',
  'Jan 1 2030 12:00:05',
  new Date(NOW + 5_000).toString(),
  new Date(NOW + 5_000).toISOString(),
);

/** Values a server may send, each with the date it was built from when there is one. */
const values: fc.Arbitrary<{ value: string; at?: Date }> = fc.oneof(
  fc.string({ maxLength: 40 }).map((value) => ({ value })),
  fc.string({ unit: 'binary', maxLength: 40 }).map((value) => ({ value })),
  junk.map((value) => ({ value })),
  fc
    .tuple(ows, fc.stringMatching(/^\d{1,25}$/), ows)
    .map(([a, digits, b]) => ({ value: `${a}${digits}${b}` })),
  fc
    .tuple(fc.constantFrom('', '+', '-', ' -'), fc.double(), fc.constantFrom('', 's', '.0', 'e3'))
    .map(([sign, n, unit]) => ({ value: `${sign}${n}${unit}` })),
  fc.tuple(dates, fc.constantFrom(...Object.keys(FORMS)), ows, ows).map(([at, form, a, b]) => ({
    value: `${a}${(FORMS[form] as (d: Date) => string)(at)}${b}`,
    at,
  })),
  // A date with one character changed, dropped or doubled: almost never still a date.
  fc
    .tuple(
      dates,
      fc.constantFrom(...Object.keys(FORMS)),
      fc.nat(),
      fc.string({ minLength: 1, maxLength: 1 }),
    )
    .chain(([at, form, i, c]) => {
      const text = (FORMS[form] as (d: Date) => string)(at);
      const k = i % text.length;
      return fc
        .constantFrom(
          text.slice(0, k) + c + text.slice(k + 1),
          text.slice(0, k) + text.slice(k + 1),
          text.slice(0, k) + text[k] + text.slice(k),
          text.toLowerCase(),
          text.toUpperCase(),
        )
        .map((value) => ({ value }));
    }),
);

describe('Retry-After: every value is a documented delay or stops the retries (fuzz)', () => {
  it('delta-seconds are exact, a future HTTP-date waits until it, anything else stops; only 0 retries at once', () => {
    fc.assert(
      fc.property(values, fc.constantFrom(503 as const, 429 as const), ({ value, at }, status) => {
        const outcome = afterRetryAfter(value, status);
        const text = bare(value);
        if (/^\d+$/.test(text)) {
          const ms = Number(text) * 1000;
          expect(outcome).toBe(ms <= 30_000 ? ms : STOP_PUSHBACK);
          return;
        }
        if (outcome === STOP_PUSHBACK) {
          // A well-formed date stops only when it has come (or is past the 30 s cap).
          if (at !== undefined && Object.values(FORMS).some((f) => f(at) === text)) {
            expect(at.getTime() <= NOW || at.getTime() - NOW > 30_000).toBe(true);
          }
          return;
        }
        // Anything else retried must be a date the value spells exactly, still ahead.
        expect(outcome).toBeGreaterThan(0);
        const when = new Date(NOW + outcome);
        expect(Object.values(FORMS).some((f) => f(when) === text)).toBe(true);
        if (at !== undefined) expect(when.getTime()).toBe(at.getTime());
      }),
      { seed: 29, numRuns: 5_000 },
    );
  });
});
