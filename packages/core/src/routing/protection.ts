import { checkObject } from '../internal/validate.js';
import { type ProtectConfig, resolveProtectOptions } from '../protect/options.js';
import type { ProtectOptions } from '../protect/types.js';

/**
 * How each provider visit is protected: `protect()`'s option shapes for
 * retries, backoff, per-attempt timeout and circuit.
 */
export type RouteProtection = Pick<
  ProtectOptions,
  'attempts' | 'backoff' | 'timeout' | 'timeoutMode' | 'circuit'
>;

const KEYS = ['attempts', 'backoff', 'timeout', 'timeoutMode', 'circuit'] as const;

/**
 * Merges a provider's protection over the router's and validates it with
 * `protect()`'s own rules. The merge is one level deep on purpose: a nested
 * `backoff` or `circuit` object replaces the inherited object whole (a
 * provider never ends up with half of each), `circuit: false` disables an
 * inherited circuit, and an `undefined` key inherits.
 * @internal
 */
export function resolveProtection(
  where: string,
  shared: RouteProtection | undefined,
  own: RouteProtection | undefined,
): ProtectConfig {
  checkObject(where, own);
  const merged: Record<string, unknown> = {};
  for (const key of KEYS) {
    const value = own?.[key] !== undefined ? own[key] : shared?.[key];
    if (value !== undefined) merged[key] = value;
  }
  try {
    return resolveProtectOptions(merged as ProtectOptions);
  } catch (error) {
    // Same error class, but naming the provider whose (inherited) setting is wrong.
    if (error instanceof TypeError) throw new TypeError(`${where}: ${error.message}`);
    if (error instanceof RangeError) throw new RangeError(`${where}: ${error.message}`);
    throw error;
  }
}
