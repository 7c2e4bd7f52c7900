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

/** What a validation error knows, so an outer factory can re-address it. */
interface OptionFault {
  /** Full option path from the factory's options object (`''` is the object itself). */
  path: string;
  /** The factory whose options these are, when known. */
  fn: string | undefined;
  /** Error class to throw. */
  kind: 'type' | 'range';
  /** Text after the path, e.g. `must be >= 0, got -1`; `undefined` for an unknown key. */
  detail: string | undefined;
  /** Full path of the nearest known key, for an unknown key. */
  suggestion: string | undefined;
}

const FAULT = Symbol('breakwater.optionFault');

function joinPath(prefix: string, path: string): string {
  if (prefix === '') return path;
  if (path === '') return prefix;
  return path.startsWith('[') ? prefix + path : `${prefix}.${path}`;
}

function render(f: OptionFault): string {
  const at = f.fn === undefined ? '' : `${f.fn}: `;
  const shown = f.path === '' ? 'options' : f.path;
  if (f.detail !== undefined) return `${at}${shown} ${f.detail}`;
  const hint = f.suggestion === undefined ? '' : ` — did you mean \`${f.suggestion}\`?`;
  return `${at}unknown option \`${shown}\`${hint}`;
}

function fault(f: OptionFault): TypeError | RangeError {
  const error = f.kind === 'range' ? new RangeError(render(f)) : new TypeError(render(f));
  Object.defineProperty(error, FAULT, { value: f });
  return error;
}

/** A `TypeError` naming option `path` (and factory `fn`, when given). @internal */
export function optionTypeError(path: string, detail: string, fn?: string): TypeError {
  return fault({ path, fn, kind: 'type', detail, suggestion: undefined });
}

/** A `RangeError` naming option `path` (and factory `fn`, when given). @internal */
export function optionRangeError(path: string, detail: string, fn?: string): RangeError {
  return fault({ path, fn, kind: 'range', detail, suggestion: undefined });
}

/**
 * Runs `build` (which validates the options found at `prefix`) and re-throws its
 * option errors with `prefix` in front of their path and `fn` as the factory,
 * so a nested object handed to another factory is reported by its full path:
 * `resilienceLink: retry.backoff.baseDelayMs must be >= 0, got -1`.
 * Other errors pass through untouched.
 * @internal
 */
export function optionPath<T>(
  prefix: string | ((path: string) => string),
  build: () => T,
  fn?: string,
): T {
  try {
    return build();
  } catch (error) {
    const f = (error as { [FAULT]?: OptionFault } | null)?.[FAULT];
    if (f === undefined) throw error;
    // A function maps the inner path itself, for options renamed on the way in.
    const at = typeof prefix === 'string' ? (p: string) => joinPath(prefix, p) : prefix;
    throw fault({
      ...f,
      path: at(f.path),
      suggestion: f.suggestion === undefined ? undefined : at(f.suggestion),
      fn: fn ?? f.fn,
    });
  }
}

/** Damerau (optimal string alignment) distance, for "did you mean". */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/** Rank of a key that is a whole word of the real name: after one edit, before two. */
const WHOLE_WORD = 1.5;

/**
 * Names 0.2 renamed to the breaker's vocabulary, too far from the new name for
 * the typo search to find: an old key gets the new one as its hint when the
 * options object knows it.
 */
const RENAMED: Readonly<Record<string, string>> = {
  failures: 'failureThreshold',
  reset: 'openDurationMs',
};

/** The known key `key` most likely stands for, or `undefined` when none is close. */
function nearestKey(key: string, known: readonly string[]): string | undefined {
  const renamed = Object.hasOwn(RENAMED, key) ? RENAMED[key] : undefined;
  if (renamed !== undefined && known.includes(renamed)) return renamed;
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const c = candidate.toLowerCase();
    let d = editDistance(lower, c);
    // `attempts` for `maxAttempts`, `delay` for `delayMs`: a whole word of the real name.
    if (d > 0 && lower.length >= 4 && (c.includes(lower) || lower.includes(c))) d = WHOLE_WORD;
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  // Close means at most one edit per three characters (at least one), and never
  // rewriting the whole key (`x` is not a typo of `k`).
  const close =
    bestDistance === WHOLE_WORD ||
    (bestDistance < key.length && bestDistance <= Math.max(1, Math.floor(key.length / 3)));
  return close ? best : undefined;
}

/**
 * Known keys of an options type, as an object with every key set to `true`; build it
 * with {@link keysOf} from one array of the names, so TypeScript checks that it lists
 * exactly the interface's keys.
 * @internal
 */
export type KnownKeys<T> = { readonly [K in keyof Required<T>]: true };

/** The keys of `T` that `Names` leaves out (never when it lists them all). */
type Missing<T, Names extends readonly PropertyKey[]> = Exclude<keyof Required<T>, Names[number]>;

/**
 * The known keys of an options type from one `as const` array of its names:
 * `keysOf<XOptions>()(['a', 'b'])`. TypeScript refuses an array that names a key
 * the type does not have, or leaves one out (the error names it under `missing`),
 * so the list cannot drift from the type. Curried so `T` is given and the names inferred.
 * @internal
 */
export function keysOf<T>() {
  return <const Names extends readonly (keyof Required<T> & string)[]>(
    names: Names & ([Missing<T, Names>] extends [never] ? unknown : { missing: Missing<T, Names> }),
  ): KnownKeys<T> => Object.fromEntries(names.map((name) => [name, true])) as KnownKeys<T>;
}

/**
 * Throws a `TypeError` for the first key of `options` that `known` does not list,
 * naming its full path (`path` is where `options` sits, `''` for a factory's own
 * options) and, when one is close, the valid key it probably meant. Costs one
 * `for...in` over the object's keys.
 * @internal
 */
export function checkKeys(
  fn: string | undefined,
  options: object,
  known: Readonly<Record<string, true>>,
  path = '',
): void {
  for (const key in options) {
    // Inherited names (`toString`, `__proto__`) are not `true` in `known`, so they count as unknown.
    if (known[key] !== true) {
      const near = nearestKey(key, Object.keys(known));
      throw fault({
        path: joinPath(path, key),
        fn,
        kind: 'type',
        detail: undefined,
        suggestion: near === undefined ? undefined : joinPath(path, near),
      });
    }
  }
}

/**
 * Throws the unknown-option `TypeError` (with its "did you mean") for a key of
 * `bag` that is not in `known` but close to a key that is (`timeoutMS` for
 * `timeoutMs`); keys far from every known one pass. For an object shared
 * with others, such as tRPC's per-call `context`, where foreign keys are normal.
 * @internal
 */
export function checkLookalikeKeys(
  fn: string | undefined,
  bag: object,
  known: Readonly<Record<string, true>>,
  path: string,
): void {
  for (const key of Object.keys(bag)) {
    if (known[key] === true) continue;
    const near = nearestKey(key, Object.keys(known));
    if (near === undefined) continue;
    throw fault({
      path: joinPath(path, key),
      fn,
      kind: 'type',
      detail: undefined,
      suggestion: joinPath(path, near),
    });
  }
}

/**
 * Checks that `value` is a plain options object (or `undefined` when `optional`)
 * holding only `known` keys; `path` is where it sits (`''` for a factory's own options).
 * @internal
 */
export function checkOptions(
  fn: string | undefined,
  value: unknown,
  known: Readonly<Record<string, true>>,
  path = '',
  optional = true,
): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionTypeError(path, `must be an object, got ${show(value)}`, fn);
  }
  checkKeys(fn, value, known, path);
}

/**
 * Checks that `value` is a number obeying `rule`; returns it.
 * Throws `TypeError` for a non-number and `RangeError` for a number out of range.
 * @internal
 */
export function checkNumber(name: string, value: unknown, rule: NumberRule = {}): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw optionTypeError(name, `must be a number, got ${show(value)}`);
  }
  if (!Number.isFinite(value) && !(rule.allowInfinity && value === Number.POSITIVE_INFINITY)) {
    throw optionRangeError(name, `must be finite, got ${show(value)}`);
  }
  if (rule.integer && Number.isFinite(value) && !Number.isInteger(value)) {
    throw optionRangeError(name, `must be an integer, got ${show(value)}`);
  }
  if (rule.min !== undefined && value < rule.min) {
    throw optionRangeError(name, `must be >= ${rule.min}, got ${show(value)}`);
  }
  if (rule.above !== undefined && value <= rule.above) {
    throw optionRangeError(name, `must be > ${rule.above}, got ${show(value)}`);
  }
  if (rule.max !== undefined && value > rule.max) {
    throw optionRangeError(name, `must be <= ${rule.max}, got ${show(value)}`);
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
    throw optionTypeError(
      name,
      `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${show(value)}`,
    );
  }
  return value as T;
}

/** Checks that `value` is a function (or undefined when optional). @internal */
export function checkFunction(name: string, value: unknown, optional = true): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'function') {
    throw optionTypeError(name, `must be a function, got ${show(value)}`);
  }
}

/** Checks that `value` is a plain options object (or undefined). @internal */
export function checkObject(name: string, value: unknown, optional = true): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionTypeError(name, `must be an object, got ${show(value)}`);
  }
}
