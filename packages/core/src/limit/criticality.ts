import { checkOneOf } from '../internal/validate.js';
import { currentInbound } from '../propagation/inbound.js';

/**
 * How much a call matters when a target is overloaded, most important first:
 * `'critical'` calls may fill the whole adaptive concurrency limit,
 * `'default'` and `'sheddable'` calls only a share of it, so the lowest tier is
 * refused first. The same values travel with a call across hops.
 */
export type Criticality = 'critical' | 'default' | 'sheddable';

/** Every {@link Criticality}, most important first. */
export const CRITICALITIES: readonly Criticality[] = Object.freeze([
  'critical',
  'default',
  'sheddable',
]);

/**
 * `value` of per-call option `name` as a criticality; left out, the criticality
 * of the inbound call being served (it travels across hops), else `'default'`.
 * @internal
 */
export function criticalityOf(name: string, value: unknown): Criticality {
  if (value !== undefined) return checkOneOf(name, value, CRITICALITIES);
  return currentInbound()?.criticality ?? 'default';
}
