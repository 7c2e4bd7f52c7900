import { GCProfiler, getHeapStatistics } from 'node:v8';

/**
 * Counts the bytes this process allocates on the JS heap between `start()`
 * and `stop()`: the growth of the used heap plus what every garbage
 * collection in between freed (V8's `GCProfiler` reports each collection's
 * used heap before and after). Off-heap memory (buffers' backing stores) is
 * not counted.
 */
export class AllocationMeter {
  private profiler: GCProfiler | undefined;
  private usedAtStart = 0;

  start(): void {
    this.profiler = new GCProfiler();
    this.usedAtStart = getHeapStatistics().used_heap_size;
    this.profiler.start();
  }

  /** Bytes allocated since `start()`. */
  stop(): number {
    const used = getHeapStatistics().used_heap_size;
    const profile = (this.profiler as GCProfiler).stop();
    this.profiler = undefined;
    let freed = 0;
    for (const gc of profile.statistics) {
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    }
    return Math.max(0, used - this.usedAtStart + freed);
  }
}
