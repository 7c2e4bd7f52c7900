/**
 * Promise plumbing for the hot paths: a promise whose settlers are handed over
 * without an executor closure, and an operation's outcome forwarded without a
 * closure per call.
 * @internal
 */

const noop = (): void => {};

/** The settlers of the promise last made by {@link newPromise}: read them right after the call. @internal */
export const settlers = {
  resolve: noop as (value: unknown) => void,
  reject: noop as (error: unknown) => void,
};

// The executor runs synchronously inside `new Promise`, so one module-level function serves every call.
function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  settlers.resolve = resolve as (value: unknown) => void;
  settlers.reject = reject;
}

/** A new pending promise; take its settlers from {@link settlers} at once. @internal */
export function newPromise<T>(): Promise<T> {
  return new Promise<T>(capture);
}

/** Told once how an operation ended (it ignores what comes too late). @internal */
export interface OutcomeSink {
  onOutcome(ok: boolean, value: unknown): void;
}

/** Awaits `pending` and reports its outcome to `sink`. Never rejects, so an abandoned operation's failure is absorbed; a `then` that throws (getter or call) is reported as a failure, as `await` sees it. @internal */
export async function forwardOutcome(
  sink: OutcomeSink,
  pending: PromiseLike<unknown>,
): Promise<void> {
  let value: unknown;
  try {
    value = await pending;
  } catch (error) {
    sink.onOutcome(false, error);
    return;
  }
  sink.onOutcome(true, value);
}
