/** How a provider's peak-EWMA latency moves: see {@link ProviderLoad}. @internal */
export interface LoadSettings {
  /** Time constant of the decay, in ms: a peak falls to 1/e of itself in this long. */
  readonly decayMs: number;
  /** The latency assumed until the provider's first measured visit, in ms. */
  readonly defaultLatencyMs: number;
}

/** Tower's and Linkerd's defaults (Finagle's decay is 10 s too). @internal */
export const DEFAULT_LOAD_SETTINGS: LoadSettings = { decayMs: 10_000, defaultLatencyMs: 30 };

/**
 * One provider's load as the router sees it: its visits in flight and a
 * peak-EWMA of their latency (Finagle's, Linkerd's and tower's load metric).
 *
 * - Until its first answer a provider counts as `defaultLatencyMs`; the first
 *   answer's latency replaces that.
 * - A sample above the current estimate replaces it at once (the peak), so
 *   one slow answer makes the provider expensive straight away.
 * - A lower sample pulls the estimate toward it, weighted by the time since
 *   the last sample (`1 - exp(-elapsed / decayMs)`), and with no samples the
 *   estimate decays toward zero with the same time constant, so a provider
 *   that was avoided after a slow spell is tried again later.
 * - A visit still in flight counts as a sample of its elapsed time once that
 *   exceeds the estimate, so a hung provider's cost rises without any answer.
 * - A failed visit can only raise the estimate: a fast refusal says nothing
 *   about how fast the provider answers, and must not make it attractive.
 *
 * Reading the estimate never changes it: the decay is computed from the
 * reading's time, so how often the router looks does not matter.
 * @internal
 */
export class ProviderLoad {
  /** Start times of the visits in flight. */
  private readonly starts: number[] = [];
  /** The estimate at its last update, or `undefined` before the first measured visit. */
  private estimate: number | undefined;
  private estimatedAt = 0;

  constructor(private readonly settings: LoadSettings) {}

  /** Visits in flight now. */
  get inflight(): number {
    return this.starts.length;
  }

  /** A visit started at `startedAt`. */
  begin(startedAt: number): void {
    this.starts.push(startedAt);
  }

  /** The visit started at `startedAt` ended (its outcome is reported separately). */
  end(startedAt: number): void {
    const i = this.starts.indexOf(startedAt);
    if (i >= 0) this.starts.splice(i, 1);
  }

  /** A successful visit took `ms`, ending at `now`. */
  succeeded(ms: number, now: number): void {
    const weight = this.weight(now);
    const decayed = this.decayed(now);
    // Above the estimate: the peak, at once. Below: the longer since the last sample, the more it counts.
    this.estimate = this.estimate === undefined || ms > decayed ? ms : decayed + ms * (1 - weight);
    this.estimatedAt = now;
  }

  /** A failed visit took `ms`, ending at `now`: it raises the estimate when it ran longer. */
  failed(ms: number, now: number): void {
    if (ms <= this.decayed(now)) return;
    this.estimate = ms;
    this.estimatedAt = now;
  }

  /** The peak-EWMA latency at `now`, in ms, raised to the oldest visit in flight's elapsed time. */
  latency(now: number): number {
    const decayed = this.decayed(now);
    let oldest = Number.POSITIVE_INFINITY;
    for (const start of this.starts) if (start < oldest) oldest = start;
    return Math.max(decayed, now - oldest);
  }

  /** What one more visit is expected to cost: latency × (visits in flight + 1). */
  cost(now: number): number {
    return this.latency(now) * (this.starts.length + 1);
  }

  /** The estimate decayed to `now` (no sample since its last update), or the default before any. */
  private decayed(now: number): number {
    if (this.estimate === undefined) return this.settings.defaultLatencyMs;
    return this.estimate * this.weight(now);
  }

  /** How much of the estimate survives from its last update to `now`. */
  private weight(now: number): number {
    const elapsed = now - this.estimatedAt;
    return elapsed <= 0 ? 1 : Math.exp(-elapsed / this.settings.decayMs);
  }
}
