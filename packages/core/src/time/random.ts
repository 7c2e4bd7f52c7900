/** A source of random numbers in `[0, 1)`, injected wherever a primitive jitters. */
export type RandomSource = () => number;

/** `Math.random()`; the only place in Breakwater that calls it. */
export const systemRandom: RandomSource = () => Math.random();

function checkUnit(name: string, value: number): void {
  if (typeof value !== 'number' || !(value >= 0 && value < 1)) {
    throw new RangeError(`${name} must be a number in [0, 1), got ${String(value)}`);
  }
}

/**
 * A random source that always returns `value`.
 * @example fixedRandom(0) // backoff delays sit at their floor
 */
export function fixedRandom(value: number): RandomSource {
  checkUnit('fixedRandom(value)', value);
  return () => value;
}

/**
 * A random source that cycles through `values` in order.
 * @example const r = sequenceRandom([0.1, 0.9]); r(); r(); r() // 0.1, 0.9, 0.1
 */
export function sequenceRandom(values: readonly number[]): RandomSource {
  if (!Array.isArray(values) || values.length === 0) {
    throw new RangeError('sequenceRandom(values) needs a non-empty array');
  }
  values.forEach((v, i) => {
    checkUnit(`sequenceRandom(values)[${i}]`, v);
  });
  const copy = values.slice();
  let i = 0;
  return () => {
    const v = copy[i] as number;
    i = (i + 1) % copy.length;
    return v;
  };
}
