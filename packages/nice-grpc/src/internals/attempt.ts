import { PREVIOUS_ATTEMPTS_HEADER, type TrailerGetter } from '@breakwater/core/grpc';
import type { CallOptions, Metadata } from 'nice-grpc-common';
import { withTimeoutHeader } from './deadline.js';
import { StampedMetadata } from './stamped-metadata.js';

/**
 * One attempt of a retried or hedged call: the call options it goes down
 * with, and the header and trailer it received. Until the call commits to
 * it, what it receives is held back, so the caller's `onHeader`/`onTrailer`
 * see only the attempt whose result they get (plus everything after a
 * stream's first message).
 * @internal
 */
export class Attempt {
  header: Metadata | undefined = undefined;
  trailer: Metadata | undefined = undefined;
  committed = false;
  /** Response headers arrived. */
  private headerSeen = false;
  readonly options: CallOptions;

  /**
   * @param caller the call options below this middleware (its own keys taken out)
   * @param index 1 for the first attempt
   * @param timeoutMs time this attempt may take (sent as `grpc-timeout`); `Infinity` for none
   * @param signal the attempt's signal, when it differs from the caller's
   * @param perAttempt the attempt runs under its own deadline, earlier than the call's
   * @param judged a failure of this attempt is judged for a retry or hedge (its trailer is read)
   */
  constructor(
    private readonly caller: CallOptions,
    readonly index: number,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    readonly perAttempt = false,
    judged = true,
  ) {
    let metadata = caller.metadata;
    if (timeoutMs !== Number.POSITIVE_INFINITY) metadata = withTimeoutHeader(metadata, timeoutMs);
    if (index > 1) {
      metadata = new StampedMetadata(metadata, PREVIOUS_ATTEMPTS_HEADER, String(index - 1));
    }
    // The trailer is read for a judged attempt (pushback, and whether a server answered), the
    // header only for a caller who listens: nice-grpc converts them (a Metadata of about 1 KB
    // each) for every call that has a listener.
    // Object.assign, not a spread: Node 20's V8 takes a slow path (about 1 µs per key)
    // to add keys the spread source lacks to a spread copy.
    this.options = Object.assign({}, caller, {
      metadata,
      signal: signal ?? caller.signal,
      onHeader: caller.onHeader === undefined ? undefined : headerSink(this),
      onTrailer: judged || caller.onTrailer !== undefined ? trailerSink(this) : undefined,
    });
  }

  /**
   * Response headers arrived (seen when the caller listens to them). Whether a
   * trailers-only answer came from a server is read from the trailer by the
   * core classifier.
   */
  get headersReceived(): boolean {
    return this.headerSeen;
  }

  /** Reads this attempt's trailer, for pushback and for what proves a server answered. */
  trailerValue(): TrailerGetter | undefined {
    const trailer = this.trailer;
    if (trailer === undefined) return undefined;
    return (key) => {
      const value = trailer.get(key);
      return typeof value === 'string' ? value : undefined;
    };
  }

  /** Forwards to the caller once committed. @internal */
  forwardHeader(header: Metadata): void {
    this.headerSeen = true;
    if (this.committed) this.caller.onHeader?.(header);
    else this.header = header;
  }

  /** Forwards to the caller once committed. @internal */
  forwardTrailer(trailer: Metadata): void {
    if (this.committed) this.caller.onTrailer?.(trailer);
    else this.trailer = trailer;
  }

  /** This attempt's result is the call's: hand over what was held back. */
  commit(): void {
    if (this.committed) return;
    this.committed = true;
    if (this.header !== undefined) this.caller.onHeader?.(this.header);
    if (this.trailer !== undefined) this.caller.onTrailer?.(this.trailer);
    this.header = undefined;
    this.trailer = undefined;
  }
}

// Built by factories, not as named properties: transpilers that keep function
// names (esbuild keepNames, as tsx runs) would otherwise rename each closure per call.
function headerSink(attempt: Attempt): (header: Metadata) => void {
  return (header) => attempt.forwardHeader(header);
}

function trailerSink(attempt: Attempt): (trailer: Metadata) => void {
  return (trailer) => attempt.forwardTrailer(trailer);
}
