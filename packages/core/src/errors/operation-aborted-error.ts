import { brandError, hasBrand } from './brand.js';

/** The caller cancelled the operation (its `AbortSignal` aborted without an `Error` reason). */
export class OperationAbortedError extends Error {
  constructor(options?: {
    /** Replaces the default message. Defaults to `'Operation aborted'`. */
    message?: string;
    /** The underlying error, kept as the standard `cause`. Defaults to none. */
    cause?: unknown;
  }) {
    super(
      options?.message ?? 'Operation aborted',
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    brandError(this, 'OperationAbortedError');
  }
}

/** True for an {@link OperationAbortedError} from any copy of Breakwater. */
export function isOperationAbortedError(e: unknown): e is OperationAbortedError {
  return hasBrand(e, 'OperationAbortedError');
}
