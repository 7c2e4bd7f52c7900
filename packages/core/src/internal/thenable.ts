/**
 * True for a promise or any object or function with a `then` method. Never
 * throws: a value whose `then` cannot be read (a throwing getter, a revoked
 * proxy) counts as a thenable, so the caller adopts it the way `await` and
 * `Promise.resolve` do — and they turn the same failure into a rejection of
 * the call instead of a synchronous throw after a deadline or slot was taken.
 * @internal
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  try {
    return typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return true;
  }
}
