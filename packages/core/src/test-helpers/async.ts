/** A promise with its settlers, for tests that release work by hand. @internal */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** Creates a {@link Deferred}. @internal */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves after pending promise continuations and immediates have run. @internal */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
