/** How many of a stack's latest outbound calls the overload rule looks at. */
export const RECENT_CALLS = 20;

/** The share of those calls that must have failed for exhausted retries to mean "overloaded". */
export const OVERLOADED_FAILURE_RATIO = 0.5;

/**
 * The outcomes of a stack's latest outbound calls made inside bound handlers
 * (each call once, after its retries): whether its downstream fails most calls
 * even with retries, or only the unlucky one. @internal
 */
export class RecentFailures {
  private readonly failed: boolean[] = [];
  private next = 0;
  private failures = 0;

  record(failed: boolean): void {
    if (this.failed.length < RECENT_CALLS) this.failed.push(failed);
    else {
      if (this.failed[this.next]) this.failures--;
      this.failed[this.next] = failed;
    }
    if (failed) this.failures++;
    this.next = (this.next + 1) % RECENT_CALLS;
  }

  /** At least {@link OVERLOADED_FAILURE_RATIO} of the recorded calls failed (none recorded: no). */
  mostlyFailing(): boolean {
    const n = this.failed.length;
    return n > 0 && this.failures / n >= OVERLOADED_FAILURE_RATIO;
  }
}
