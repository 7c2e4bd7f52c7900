import type { RedisLink, Script } from './link.js';

/** One key's refill waiting for its batch. */
interface Ask {
  readonly key: string;
  readonly want: number;
  readonly resolve: (reply: unknown) => void;
  readonly late: (reply: unknown) => void;
}

/**
 * Most keys one script call carries: the script blocks Redis while it runs
 * (a few µs per key), so a batch stays well under a millisecond of its time.
 * @internal
 */
export const MAX_BATCH = 500;

/**
 * Sends the lease refills of many keys of one keyed limiter in one script call
 * ({@link TAKE_TOKENS} takes any number of keys). At most one call is in
 * flight: refills asked meanwhile wait in the queue and go together in the
 * next, so the number of round trips follows Redis's speed, not the number of
 * keys (10,000 keys at a few calls each per second were ~11,000 round trips a
 * second, and on a loaded machine many outlived the time budget). A queue of
 * `maxBatch` goes at once, in flight or not. A batch's call has the same time
 * budget as a single one: when it is late, every refill in it resolves
 * `undefined` and their late replies are still counted.
 * @internal
 */
export class Batcher {
  private queue: Ask[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly link: RedisLink,
    private readonly script: Script,
    /** ARGV before the per-key counts. */
    private readonly head: readonly (string | number)[],
    private readonly maxBatch = MAX_BATCH,
  ) {}

  /** Queues a refill of `want` units from `key`; resolves as {@link RedisLink.run} does, with this key's `[granted, waitMs]`. */
  ask(key: string, want: number, late: (reply: unknown) => void): Promise<unknown> {
    return new Promise((resolve) => {
      this.queue.push({ key, want, resolve, late });
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (this.inFlight === 0 && !this.scheduled) {
        // Wait for the rest of this event-loop turn: the calls made in it go together.
        this.scheduled = true;
        setImmediate(this.tick);
      }
    });
  }

  private readonly tick = (): void => {
    this.scheduled = false;
    if (this.inFlight === 0) this.flush();
  };

  private flush(): void {
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    const keys: string[] = [];
    const args = this.head.slice();
    for (const a of batch) {
      keys.push(a.key);
      args.push(a.want);
    }
    this.inFlight++;
    const late = (reply: unknown) => {
      if (Array.isArray(reply))
        for (let i = 0; i < batch.length; i++) batch[i]?.late(part(reply, i));
    };
    void this.link.run(this.script, keys, args, undefined, late).then((reply) => {
      this.inFlight--;
      const whole = Array.isArray(reply);
      for (let i = 0; i < batch.length; i++) batch[i]?.resolve(whole ? part(reply, i) : undefined);
      if (this.inFlight === 0) this.flush();
    });
  }
}

/** The `[granted, waitMs]` of the `i`th key of a flat reply. */
function part(reply: unknown[], i: number): [unknown, unknown] {
  return [reply[2 * i], reply[2 * i + 1]];
}
