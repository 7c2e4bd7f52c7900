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
// call and writes the settlers straight into their holder.
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

const promiseThen = Promise.prototype.then;

/**
 * Reports `pending`'s outcome to `sink`, as `await pending` would see it: a
 * native promise is watched through the intrinsic `then` (a `then` patched on
 * the instance is not called, as `await` does not call it), any other
 * thenable is adopted (a `then` that throws, getter or call, is a failure).
 * Never rejects, so an abandoned operation's failure is absorbed; always
 * reports in a later microtask. Two small closures per call, cheaper than an
 * async function's frame. @internal
 */
export function forwardOutcome(sink: OutcomeSink, pending: PromiseLike<unknown>): void {
  let watched: Promise<unknown>;
  try {
    watched = Promise.resolve(pending);
  } catch (error) {
    // A `constructor` getter that throws, which `await` reports as a rejection.
    watched = Promise.reject(error);
  }
  promiseThen.call(
    watched,
    (value: unknown) => sink.onOutcome(true, value),
    (error: unknown) => sink.onOutcome(false, error),
  );
}
