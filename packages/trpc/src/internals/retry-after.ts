import type { Clock } from '@breakwater/core/time';

/** Header `name` of a fetch `Response`-like value, if it has one. @internal */
export function header(response: unknown, name: string): string | null | undefined {
  const headers = (response as { headers?: { get?: (n: string) => string | null } } | undefined)
    ?.headers;
  return typeof headers?.get === 'function' ? headers.get(name) : undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DAY = `(?<weekday>${WEEKDAYS.map((d) => d.slice(0, 3)).join('|')})`;
const LONG_DAY = `(?<weekday>${WEEKDAYS.join('|')})`;
const MONTH = `(?<month>${MONTHS.join('|')})`;
const TIME = '(?<h>\\d{2}):(?<m>\\d{2}):(?<s>\\d{2})';

/**
 * The three forms of an HTTP-date (RFC 9110 §5.6.7), case-sensitive as the
 * grammar is: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete
 * rfc850 `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`.
 */
const HTTP_DATES = [
  new RegExp(`^${DAY}, (?<day>\\d{2}) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`),
  new RegExp(`^${LONG_DAY}, (?<day>\\d{2})-${MONTH}-(?<year>\\d{2}) ${TIME} GMT$`),
  new RegExp(`^${DAY} ${MONTH} (?<day>\\d{2}| \\d) ${TIME} (?<year>\\d{4})$`),
];

/**
 * The time an HTTP-date stands for (see {@link HTTP_DATES}), or `NaN` for
 * anything else: a day or time that does not exist (Feb 30, 25:00) or a
 * weekday that is not the date's included.
 * `Date.parse` is not used: it turns free text such as `later 5` into a date.
 * @internal
 */
export function parseHttpDate(value: string, now: number): number {
  for (const form of HTTP_DATES) {
    const parts = form.exec(value)?.groups;
    if (parts !== undefined) return utcOf(parts, now);
  }
  return Number.NaN;
}

function utcOf(parts: Record<string, string | undefined>, now: number): number {
  const [day, h, m, s] = [parts.day, parts.h, parts.m, parts.s].map(Number) as [
    number,
    number,
    number,
    number,
  ];
  const month = MONTHS.indexOf(parts.month as string);
  let year = Number(parts.year);
  if ((parts.year as string).length === 2) {
    // rfc850: a two-digit year more than 50 years ahead is the most recent past year ending so.
    const thisYear = new Date(now).getUTCFullYear();
    year += thisYear - (thisYear % 100);
    if (year > thisYear + 50) year -= 100;
  }
  // A leap second (60) is refused with the rest: it cannot be told from a typo, and refusing stops the retries.
  if (h > 23 || m > 59 || s > 59) return Number.NaN;
  const at = Date.UTC(year, month, day, h, m, s);
  const date = new Date(at);
  const weekday = WEEKDAYS[date.getUTCDay()] as string;
  return date.getUTCDate() === day && weekday.startsWith(parts.weekday as string) ? at : Number.NaN;
}

/**
 * Milliseconds a `Retry-After` header asks to wait; `undefined` when absent;
 * `NaN` — a pushback the engine reads as "do not retry" — for anything but
 * delta-seconds (ASCII digits) or an HTTP-date later than `clock()`. A date
 * at or before the clock's reading stops the retries too: the client cannot
 * tell a stale date from a skewed clock, and retrying at once is what the
 * header exists to prevent. Only `0` (in seconds) asks for an immediate retry.
 * @internal
 */
export function retryAfterMsFrom(response: unknown, clock: Clock): number | undefined {
  const value = header(response, 'retry-after');
  if (value === null || value === undefined) return undefined;
  // Optional whitespace around a field value is not part of it (RFC 9110 §5.5).
  const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, '');
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const now = clock();
  const delay = parseHttpDate(trimmed, now) - now;
  return delay > 0 ? delay : Number.NaN;
}
