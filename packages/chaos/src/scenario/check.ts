/**
 * Option checks for the scenario runner and client-side chaos: programmer
 * errors throw at construction, naming the option and the bad value.
 * @internal
 */

/** Throws unless `value` is a finite number `>= min` (and `<= max` when given). @internal */
export function checkRange(name: string, value: unknown, min: number, max = Infinity): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`${name} must be a number, got ${String(value)}`);
  }
  if (!(value >= min && value <= max) || !Number.isFinite(value)) {
    const bound = max === Infinity ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new RangeError(`${name} must be a finite number ${bound}, got ${value}`);
  }
  return value;
}

/** Throws unless `value` is a function. @internal */
export function checkCallable(name: string, value: unknown): void {
  if (typeof value !== 'function') {
    throw new TypeError(`${name} must be a function, got ${typeof value}`);
  }
}
