import { brandError, hasBrand } from './brand.js';

/** Every concurrency slot was busy and the wait queue was full, so the task did not run. */
export class QueueFullError extends Error {
  /** The queue bound that was hit. */
  readonly maxQueue: number | undefined;

  constructor(
    maxQueue?: number,
    options?: {
      /** Replaces the default message. Defaults to `'Queue is full'`, naming `maxQueue` when given. */
      message?: string;
    },
  ) {
    super(
      options?.message ??
        (maxQueue === undefined ? 'Queue is full' : `Queue is full (maxQueue ${maxQueue})`),
    );
    brandError(this, 'QueueFullError');
    this.maxQueue = maxQueue;
  }
}

/** True for a {@link QueueFullError} from any copy of Breakwater. */
export function isQueueFullError(e: unknown): e is QueueFullError {
  return hasBrand(e, 'QueueFullError');
}
