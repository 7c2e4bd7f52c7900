/** A successful {@link Result}. */
export interface Ok<T> {
  /** Always `true`; narrows a {@link Result} to `Ok`. */
  readonly ok: true;
  /** The operation's value. */
  readonly value: T;
}

/** A failed {@link Result}. */
export interface Err<E> {
  /** Always `false`; narrows a {@link Result} to `Err`. */
  readonly ok: false;
  /** Why the operation failed. */
  readonly error: E;
}

/** The outcome of an operation that fails as a matter of course (a refused token, a miss). */
export type Result<T, E> = Ok<T> | Err<E>;

/** Wraps a value as a successful result. */
export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

/** Wraps an error as a failed result. */
export function err<E>(error: E): Err<E> {
  return { ok: false, error };
}

/** True when `r` is successful. */
export function isOk<T, E>(r: Result<T, E>): r is Ok<T> {
  return r.ok;
}

/** True when `r` failed. */
export function isErr<T, E>(r: Result<T, E>): r is Err<E> {
  return !r.ok;
}
