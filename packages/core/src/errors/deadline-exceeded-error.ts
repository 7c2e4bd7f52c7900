import { brandError, hasBrand } from './brand.js';

/** A deadline or timeout passed before the operation finished. */
export class DeadlineExceededError extends Error {
  /** The budget that was exceeded, in ms, when known. */
  readonly timeoutMs: number | undefined;

  constructor(
    timeoutMs?: number,
    options?: {
      /** Replaces the default message. Defaults to `'Deadline exceeded'`, naming `timeoutMs` when given. */
      message?: string;
      /** The underlying error, kept as the standard `cause`. Defaults to none. */
      cause?: unknown;
    },
  ) {
    super(
      options?.message ??
        (timeoutMs === undefined ? 'Deadline exceeded' : `Deadline of ${timeoutMs} ms exceeded`),
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    brandError(this, 'DeadlineExceededError');
    this.timeoutMs = timeoutMs;
  }
}

/** True for a {@link DeadlineExceededError} from any copy of Breakwater. */
export function isDeadlineExceededError(e: unknown): e is DeadlineExceededError {
  return hasBrand(e, 'DeadlineExceededError');
}
