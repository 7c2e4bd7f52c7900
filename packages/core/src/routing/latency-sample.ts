/**
 * A bounded sample of recent latencies with a cached percentile, for
 * percentile hedging. Memory is fixed (`size` latencies and their times);
 * only latencies recorded within the last `windowMs` count, so a burst of
 * slow calls stops steering the hedge delay once it is `windowMs` old, even
 * when few requests follow it. The percentile is recomputed from a sorted
 * copy every `refreshEvery` records, and on read when a quarter of the
 * window has passed since the last refresh, so reading it on every request
 * costs a field load and a comparison.
 * @internal
 */
export class LatencySample {
  private readonly ring: Float64Array;
  private readonly times: Float64Array;
  private readonly scratch: Float64Array;
  private count = 0;
  private next = 0;
  private sinceRefresh = 0;
  private refreshedAt = Number.NEGATIVE_INFINITY;
  private cached: number | undefined;

  constructor(
    /** Percentile in `(0, 100)` this sample reports. */
    private readonly percentile: number,
    /** Latencies older than this (ms) no longer count; `Infinity` keeps the last `size`. */
    private readonly windowMs = Number.POSITIVE_INFINITY,
    size = 512,
    private readonly refreshEvery = 16,
    /** Samples within the window needed before the percentile is trusted. */
    private readonly minSamples = 20,
  ) {
    this.ring = new Float64Array(size);
    this.times = new Float64Array(size);
    this.scratch = new Float64Array(size);
  }

  /** Records one observed latency in ms, seen at time `now`. */
  record(ms: number, now: number): void {
    this.ring[this.next] = ms;
    this.times[this.next] = now;
    this.next = (this.next + 1) % this.ring.length;
    if (this.count < this.ring.length) this.count++;
    if (++this.sinceRefresh >= this.refreshEvery || this.cached === undefined) this.refresh(now);
  }

  /** The percentile of the recent sample at time `now`, or undefined while there are too few samples. */
  value(now: number): number | undefined {
    if (this.cached !== undefined && now - this.refreshedAt >= this.windowMs / 4) {
      this.refresh(now);
    }
    return this.cached;
  }

  private refresh(now: number): void {
    this.sinceRefresh = 0;
    this.refreshedAt = now;
    const from = now - this.windowMs;
    let n = 0;
    for (let i = 0; i < this.count; i++) {
      if ((this.times[i] as number) >= from) this.scratch[n++] = this.ring[i] as number;
    }
    if (n < this.minSamples) {
      this.cached = undefined;
      return;
    }
    const sorted = this.scratch.subarray(0, n).sort();
    // Nearest-rank percentile.
    const rank = Math.ceil((this.percentile / 100) * n);
    this.cached = sorted[Math.min(n, Math.max(1, rank)) - 1];
  }
}
