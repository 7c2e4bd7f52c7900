/**
 * Option validation shared by every factory: programmer errors throw at
 * construction and name the option and the bad value.
 * @internal
 */

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    return String(value);
  }
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

/** Describes a value for an error message. @internal */
export const describeValue = show;

/** Options for {@link checkNumber}. @internal */
export interface NumberRule {
  /** Inclusive lower bound. */
  min?: number;
  /** Exclusive lower bound. */
  above?: number;
  /** Inclusive upper bound. */
  max?: number;
  /** Must be an integer (`Infinity` allowed only with `allowInfinity`). */
  integer?: boolean;
  /** Accept `Infinity`. */
  allowInfinity?: boolean;
}

/**
 * Checks that `value` is a number obeying `rule`; returns it.
 * Throws `TypeError` for a non-number and `RangeError` for a number out of range.
 * @internal
 */
export function checkNumber(name: string, value: unknown, rule: NumberRule = {}): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`${name} must be a number, got ${show(value)}`);
  }
  if (!Number.isFinite(value) && !(rule.allowInfinity && value === Number.POSITIVE_INFINITY)) {
    throw new RangeError(`${name} must be finite, got ${show(value)}`);
  }
  if (rule.integer && Number.isFinite(value) && !Number.isInteger(value)) {
    throw new RangeError(`${name} must be an integer, got ${show(value)}`);
  }
  if (rule.min !== undefined && value < rule.min) {
    throw new RangeError(`${name} must be >= ${rule.min}, got ${show(value)}`);
  }
  if (rule.above !== undefined && value <= rule.above) {
    throw new RangeError(`${name} must be > ${rule.above}, got ${show(value)}`);
  }
  if (rule.max !== undefined && value > rule.max) {
    throw new RangeError(`${name} must be <= ${rule.max}, got ${show(value)}`);
  }
  return value;
}

/** Like {@link checkNumber} but returns `fallback` when `value` is `undefined`. @internal */
export function optionalNumber(
  name: string,
  value: unknown,
  fallback: number,
  rule: NumberRule = {},
): number {
  return value === undefined ? fallback : checkNumber(name, value, rule);
}

/** Checks that `value` is one of `allowed`; returns it. @internal */
export function checkOneOf<T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new TypeError(
      `${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${show(value)}`,
    );
  }
  return value as T;
}

/** Checks that `value` is a function (or undefined when optional). @internal */
export function checkFunction(name: string, value: unknown, optional = true): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'function') {
    throw new TypeError(`${name} must be a function, got ${show(value)}`);
  }
}

/** Checks that `value` is a plain options object (or undefined). @internal */
export function checkObject(name: string, value: unknown, optional = true): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object, got ${show(value)}`);
  }
}
