import { onAbort } from '../internal/on-abort.js';

/**
 * An `AbortController` that also aborts (with the same reason) when `parent`
 * aborts. Call `unlink()` when done so the parent keeps no listener.
 * Only the calls that need their own abort (hedges, races, attempt timeouts)
 * pay for one.
 * @internal
 */
export class LinkedController extends AbortController {
  /** Removes the listener on the parent signal. Idempotent. */
  readonly unlink: () => void;

  constructor(parent: AbortSignal) {
    super();
    this.unlink = onAbort(parent, () => this.abort(parent.reason));
  }
}
