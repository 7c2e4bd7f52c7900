import { abortError } from '../internal/abort.js';
import { checkFunction } from '../internal/validate.js';
import { describeFailure, type HealthVerdict, type ProbeContext } from './probe.js';
import type { ReadinessRule } from './readiness.js';

function checkRules(where: string, rules: readonly unknown[]): void {
  if (rules.length === 0) throw new RangeError(`${where} needs at least one rule, got none`);
  rules.forEach((rule, i) => {
    checkFunction(`${where} rule ${i}`, rule, false);
  });
}

/** Evaluates every rule at once; a rule that throws counts as unhealthy. */
async function evaluate<T>(
  rules: readonly ReadinessRule<T>[],
  target: T | undefined,
  ctx: Partial<ProbeContext> | undefined,
): Promise<HealthVerdict[]> {
  const verdicts = await Promise.all(
    rules.map((rule) =>
      rule(target, ctx).then(
        (v) => v,
        (error: unknown): HealthVerdict => ({ healthy: false, reason: describeFailure(error) }),
      ),
    ),
  );
  // A cut evaluation proves nothing either way.
  if (ctx?.signal?.aborted) throw abortError(ctx.signal);
  return verdicts;
}

const reasons = (vs: readonly HealthVerdict[]) => vs.map((v) => v.reason).join('; ');

/**
 * Healthy when every rule is healthy. The reason lists the failing rules'
 * reasons (or all reasons when healthy). Rules run concurrently.
 * @example allOf(belowLimit({ sample: queueDepth, limit: 500 }), sampleUnchanged({ sample: drops }))
 */
export function allOf<T = unknown>(...rules: ReadinessRule<T>[]): ReadinessRule<T> {
  checkRules('allOf(...rules)', rules);
  return async (target, ctx) => {
    const verdicts = await evaluate(rules, target, ctx);
    const failing = verdicts.filter((v) => !v.healthy);
    return failing.length === 0
      ? { healthy: true, reason: reasons(verdicts) }
      : { healthy: false, reason: reasons(failing) };
  };
}

/**
 * Healthy when at least one rule is healthy. The reason is the first healthy
 * rule's, or every rule's reason when none is. Rules run concurrently.
 * @example anyOf(startupGrace({ graceMs: 60_000 }), counterProgress({ sample: delivered }))
 */
export function anyOf<T = unknown>(...rules: ReadinessRule<T>[]): ReadinessRule<T> {
  checkRules('anyOf(...rules)', rules);
  return async (target, ctx) => {
    const verdicts = await evaluate(rules, target, ctx);
    const healthy = verdicts.find((v) => v.healthy);
    return healthy ?? { healthy: false, reason: reasons(verdicts) };
  };
}
