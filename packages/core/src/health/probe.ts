import { abortError } from '../internal/abort.js';
import { redactUrls } from '../internal/redact-url.js';

/** What a probe may resolve with; resolving with nothing means healthy. */
export interface ProbeResult {
  /** Whether the target looked available. */
  healthy: boolean;
  /** Human-readable explanation, for events and logs. Defaults to `'ok'` or `'unhealthy'`. */
  reason?: string;
}

/** A probe outcome that always explains itself (what readiness rules and runProbe return). */
export interface HealthVerdict {
  /** Whether the target looked available. */
  healthy: boolean;
  /** Human-readable explanation. */
  reason: string;
}

/** What every probe receives besides its target. */
export interface ProbeContext {
  /** The provider (registry name) being probed. */
  provider: string;
  /** Aborts when the probe is cut short (checker stopped, deadline passed). */
  signal: AbortSignal;
}

/**
 * Checks that a target is available — not that it behaves correctly.
 * Resolve (with nothing or `{ healthy: true }`) for healthy; reject or resolve
 * `{ healthy: false, reason }` for unhealthy.
 * @example
 * const probe: Probe<string> = async (url, { signal }) => {
 *   const res = await fetch(url, { signal });
 *   if (!res.ok) return { healthy: false, reason: `status ${res.status}` };
 * };
 */
export type Probe<T = string> = ProbeCheck<T> & {
  /**
   * Optional: watches the target instead of being polled. A health checker
   * running this probe keeps one watch per target and restarts it after a
   * backoff when it ends; a watch resolving `'unsupported'` sends that target
   * back to polling with the probe itself. Defaults to none (polled).
   */
  watch?: ProbeWatch<T>;
};

/** One health check of a target: the callable part of a {@link Probe}. */
// biome-ignore lint/suspicious/noConfusingVoidType: `async () => {}` (Promise<void>) must be a valid probe.
export type ProbeCheck<T = string> = (target: T, ctx: ProbeContext) => Promise<ProbeResult | void>;

/** What a {@link ProbeWatch} receives besides its target. */
export interface ProbeWatchContext extends ProbeContext {
  /**
   * Records a status the target pushed, like a probe result (the reason
   * defaults to `'ok'` or `'unhealthy'`). Ignored once the watch has ended or
   * its signal has aborted.
   */
  report(healthy: boolean, reason?: string): void;
}

/**
 * A pushed health signal: calls `ctx.report` with each status the target
 * sends, and settles when the watch ends. Rejecting means the watch failed
 * (recorded as a failure, like a failed probe); resolving means it ended
 * cleanly (nothing recorded); resolving `'unsupported'` means the target
 * cannot be watched (it is polled instead). It must stop, and settle, when
 * `ctx.signal` aborts.
 */
export type ProbeWatch<T = string> = (
  target: T,
  ctx: ProbeWatchContext,
  // biome-ignore lint/suspicious/noConfusingVoidType: `async () => {}` must be a valid watch.
) => Promise<'unsupported' | void>;

/** A probe, or `'none'`: nothing is checked and nothing is recorded. */
export type ProbeSetting<T = string> = Probe<T> | 'none';

/** Text of a thrown value, for a probe's reason, with any URL in it redacted. @internal */
export function describeFailure(error: unknown): string {
  return redactUrls(error instanceof Error ? error.message || error.name : String(error));
}

/**
 * Runs `probe` and normalises its outcome into a {@link HealthVerdict}: a
 * rejection becomes `{ healthy: false, reason: <message> }`. URLs in the reason
 * are cut to `scheme://host:port/path` (no userinfo, query or fragment), so
 * health events never carry a password or token. When `ctx.signal`
 * has aborted by the time the probe settles, rejects with the abort reason
 * instead, so callers can tell a cut probe from an unhealthy target.
 */
export async function runProbe<T>(
  probe: Probe<T>,
  target: T,
  ctx: ProbeContext,
): Promise<HealthVerdict> {
  let verdict: HealthVerdict;
  try {
    const result = await probe(target, ctx);
    if (result === undefined || result === null) verdict = { healthy: true, reason: 'ok' };
    else {
      const healthy = result.healthy !== false;
      const reason = result.reason;
      verdict = {
        healthy,
        reason: reason === undefined ? (healthy ? 'ok' : 'unhealthy') : redactUrls(String(reason)),
      };
    }
  } catch (error) {
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    verdict = { healthy: false, reason: describeFailure(error) };
  }
  if (ctx.signal.aborted) throw abortError(ctx.signal);
  return verdict;
}
