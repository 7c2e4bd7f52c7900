import { describeValue, optionRangeError, optionTypeError } from './validate.js';

/** A duration: milliseconds, or a string `"<n>ms"`, `"<n>s"`, `"<n>m"`. */
export type Duration = number | `${number}ms` | `${number}s` | `${number}m`;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m)$/;
const UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/**
 * Parses a {@link Duration} into milliseconds. Throws `TypeError` naming
 * `name` for any other form, and `RangeError` for a negative or non-finite
 * number or a string too long to be finite (`"1e400ms"` is not a duration;
 * 400 nines are, and overflow).
 * @internal
 */
export function parseDuration(name: string, value: unknown): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) {
      throw optionRangeError(
        name,
        `must be a finite duration >= 0 ms, got ${describeValue(value)}`,
      );
    }
    return value;
  }
  if (typeof value === 'string') {
    const m = DURATION.exec(value.trim());
    if (m) {
      const ms = Number(m[1]) * (UNIT[m[2] as string] as number);
      // 400 nines parse to Infinity, which no timer or deadline can hold.
      if (Number.isFinite(ms)) return ms;
      throw optionRangeError(name, `must be a finite duration, got ${describeValue(value)}`);
    }
  }
  throw optionTypeError(
    name,
    `must be a number of ms or a string like "500ms", "30s", "5m", got ${describeValue(value)}`,
  );
}
