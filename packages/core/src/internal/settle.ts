/**
 * Promise plumbing for the hot paths: a promise whose settlers are handed over
 * without an executor closure, and an operation's outcome forwarded without a
 * closure per call.
 * @internal
 */

/** A settler that does nothing: what a holder keeps before it has a promise, or after it let go. @internal */
export const noSettler = (_value?: unknown): void => {};

/** Where {@link newPromiseInto} puts a new promise's settlers. @internal */
export interface Settlers<T> {
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (error: unknown) => void;
}

let into: Settlers<unknown> | undefined;

// The executor runs synchronously inside `new Promise`, so one module-level function serves every
// call. It writes the settlers straight into their holder: a holder that lives long (a reused call
// object, in the old generation) then takes two new-object stores, not four through a shared
// object, and a new holder takes none (each such store costs a write barrier's slow path).
function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  const holder = into as Settlers<unknown>;
  holder.resolve = resolve as (value: unknown) => void;
  holder.reject = reject;
}

/** A new pending promise whose settlers are written to `holder` (no executor closure per call). @internal */
export function newPromiseInto<T>(holder: Settlers<T>): Promise<T> {
  into = holder as Settlers<unknown>;
  const promise = new Promise<T>(capture);
  into = undefined;
  return promise;
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
