/**
 * A bounded sample of recent latencies with a cached percentile, for
 * percentile hedging. Memory is fixed (`size` numbers); the percentile is
 * recomputed from a sorted copy only every `refreshEvery` records, so reading
 * it on every request costs a field load.
 * @internal
 */
export class LatencySample {
  private readonly ring: Float64Array;
  private count = 0;
  private next = 0;
  private sinceRefresh = 0;
  private cached: number | undefined;

  constructor(
    /** Percentile in `(0, 100)` this sample reports. */
    private readonly percentile: number,
    size = 512,
    private readonly refreshEvery = 16,
    /** Samples needed before the percentile is trusted. */
    private readonly minSamples = 20,
  ) {
    this.ring = new Float64Array(size);
  }

  /** Records one observed latency in ms. */
  record(ms: number): void {
    this.ring[this.next] = ms;
    this.next = (this.next + 1) % this.ring.length;
    if (this.count < this.ring.length) this.count++;
    if (++this.sinceRefresh >= this.refreshEvery || this.cached === undefined) this.refresh();
  }

  /** The percentile of the recent sample, or undefined while there are too few samples. */
  value(): number | undefined {
    return this.cached;
  }

  private refresh(): void {
    this.sinceRefresh = 0;
    if (this.count < this.minSamples) return;
    const sorted = this.ring.slice(0, this.count).sort();
    // Nearest-rank percentile.
    const rank = Math.ceil((this.percentile / 100) * this.count);
    this.cached = sorted[Math.min(this.count, Math.max(1, rank)) - 1];
  }
}
