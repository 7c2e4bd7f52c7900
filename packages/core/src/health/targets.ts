import { checkObject, checkOptions, describeValue, keysOf } from '../internal/validate.js';

/** One named probe target. */
export interface NamedTarget<T = string> {
  /** Registry name of the provider. */
  name: string;
  /** What the probe is given (URL, `host:port`, channel, ...). */
  target: T;
}

/** Keys of {@link NamedTarget}. @internal */
export const NAMED_TARGET_KEYS = keysOf<NamedTarget>()(['name', 'target']);

/** Probe targets: `{ name: target }`, or `[{ name, target }]` for targets that are not plain values. */
export type HealthTargets<T = string> = Readonly<Record<string, T>> | readonly NamedTarget<T>[];

/**
 * Turns either form of {@link HealthTargets} into a list, checking that every
 * name is a non-empty string and unique.
 * @internal
 */
export function normalizeTargets<T>(targets: HealthTargets<T>): NamedTarget<T>[] {
  let list: NamedTarget<T>[];
  if (Array.isArray(targets)) {
    list = (targets as readonly NamedTarget<T>[]).map((t, i) => {
      checkOptions(undefined, t, NAMED_TARGET_KEYS, `targets[${i}]`, false);
      return { name: t.name, target: t.target };
    });
  } else {
    checkObject('targets', targets, false);
    list = Object.entries(targets as Record<string, T>).map(([name, target]) => ({ name, target }));
  }
  const seen = new Set<string>();
  for (const { name } of list) {
    if (typeof name !== 'string' || name === '') {
      throw new TypeError(
        `targets: every name must be a non-empty string, got ${describeValue(name)}`,
      );
    }
    if (seen.has(name)) throw new RangeError(`targets: duplicate name ${describeValue(name)}`);
    seen.add(name);
  }
  return list;
}
