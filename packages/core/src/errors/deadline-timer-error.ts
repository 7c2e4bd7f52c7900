import { brandError, hasBrand } from './brand.js';

/**
 * The timer enforcing a deadline failed (the injected sleep threw or rejected).
 * Distinct from {@link DeadlineExceededError}: no deadline is known to have passed.
 */
export class DeadlineTimerError extends Error {
  constructor(cause: unknown) {
    super('The deadline timer failed, so the deadline could not be enforced', { cause });
    brandError(this, 'DeadlineTimerError');
  }
}

/** True for a {@link DeadlineTimerError} from any copy of Breakwater. */
export function isDeadlineTimerError(e: unknown): e is DeadlineTimerError {
  return hasBrand(e, 'DeadlineTimerError');
}
