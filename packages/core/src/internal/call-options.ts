/**
 * Validation of per-call options (`signal`, `fallback`, `classify`), run by
 * every call before it takes a slot, permit, token or timer. A bad call
 * throws `TypeError` synchronously, like an invalid `withTimeout` or
 * `withRetry` option: nothing was taken, so the next call is unharmed. The
 * checks are a few `typeof` tests, and none run for a call without options.
 * @internal
 */
import { describeValue } from './validate.js';

/** True for an `AbortSignal`, or an object that behaves as one (another realm's, a polyfill). @internal */
function isSignalLike(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Partial<AbortSignal>;
  return (
    typeof s.aborted === 'boolean' &&
    typeof s.addEventListener === 'function' &&
    typeof s.removeEventListener === 'function'
  );
}

/** Throws `TypeError` naming `name` unless `value` is undefined or an `AbortSignal`. @internal */
export function checkSignal(name: string, value: unknown): void {
  if (value === undefined || isSignalLike(value)) return;
  throw new TypeError(
    `${name} must be an AbortSignal (a boolean \`aborted\` and add/removeEventListener), got ${describeValue(value)}`,
  );
}

function checkOptionalFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`${name} must be a function, got ${describeValue(value)}`);
  }
}

/** The per-call options shared by `protect`'s runner, `router.execute` and `pool.run`. @internal */
interface CallOptions {
  signal?: unknown;
  fallback?: unknown;
  classify?: unknown;
  propagate?: unknown;
}

/**
 * Checks a call's operation and its options object. `where` names the call
 * (`protect run`, `router.execute`, `pool.run`), so messages read
 * "router.execute options.signal must be …".
 * @internal
 */
export function checkCall(where: string, fnName: string, fn: unknown, options: unknown): void {
  if (typeof fn !== 'function') {
    throw new TypeError(`${where}(${fnName}) must be a function, got ${describeValue(fn)}`);
  }
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${where} options must be an object, got ${describeValue(options)}`);
  }
  const o = options as CallOptions;
  checkSignal(`${where} options.signal`, o.signal);
  checkOptionalFunction(`${where} options.fallback`, o.fallback);
  checkOptionalFunction(`${where} options.classify`, o.classify);
  if (o.propagate !== undefined && o.propagate !== false) {
    throw new TypeError(
      `${where} options.propagate must be false or undefined, got ${describeValue(o.propagate)}`,
    );
  }
}
