import { neverAbortedSignal } from '../internal/abort.js';

/**
 * An `AbortController` that also aborts (with the same reason) when `parent`
 * aborts. Call `unlink()` when done so the parent keeps no listener.
 * Only the calls that need their own abort (hedges, races, attempt timeouts)
 * pay for one.
 * @internal
 */
export class LinkedController extends AbortController {
  private readonly onParentAbort: (() => void) | undefined;

  constructor(private readonly parent: AbortSignal) {
    super();
    if (parent.aborted) this.abort(parent.reason);
    else if (parent !== neverAbortedSignal) {
      this.onParentAbort = () => this.abort(parent.reason);
      parent.addEventListener('abort', this.onParentAbort, { once: true });
    }
  }

  /** Removes the listener on the parent signal. Idempotent. */
  unlink(): void {
    if (this.onParentAbort) this.parent.removeEventListener('abort', this.onParentAbort);
  }
}
