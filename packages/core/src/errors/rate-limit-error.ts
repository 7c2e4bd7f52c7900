import { brandError, hasBrand } from './brand.js';

/** A rate limiter refused tokens; `retryAfterMs` says when enough will be available. */
export class RateLimitError extends Error {
  /** Milliseconds until the requested tokens are available (`Infinity` if never). */
  readonly retryAfterMs: number;

  constructor(
    retryAfterMs: number,
    options?: {
      /** Replaces the default message. Defaults to one stating `retryAfterMs`, rounded up to whole ms. */
      message?: string;
      /** The underlying error, kept as the standard `cause`. Defaults to none. */
      cause?: unknown;
    },
  ) {
    super(
      options?.message ?? `Rate limit exceeded; retry after ${Math.ceil(retryAfterMs)} ms`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    brandError(this, 'RateLimitError');
    this.retryAfterMs = retryAfterMs;
  }
}

/** True for a {@link RateLimitError} from any copy of Breakwater. */
export function isRateLimitError(e: unknown): e is RateLimitError {
  return hasBrand(e, 'RateLimitError');
}
