import { checkOptions, type KnownKeys, optionPath } from '../internal/validate.js';
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

/** Keys of {@link RouteProtection}. @internal */
export const ROUTE_PROTECTION_KEYS = {
  attempts: true,
  backoff: true,
  timeout: true,
  timeoutMode: true,
  circuit: true,
} as const satisfies KnownKeys<RouteProtection>;

const KEYS = Object.keys(ROUTE_PROTECTION_KEYS) as (keyof RouteProtection)[];

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
  checkOptions('createRouter', own, ROUTE_PROTECTION_KEYS, where);
  const merged: Record<string, unknown> = {};
  for (const key of KEYS) {
    const value = own?.[key] !== undefined ? own[key] : shared?.[key];
    if (value !== undefined) merged[key] = value;
  }
  // The caller validated `shared` on its own first, so what fails here is `own`'s.
  return optionPath(where, () => resolveProtectOptions(merged as ProtectOptions), 'createRouter');
}
