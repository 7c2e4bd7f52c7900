/**
 * Calls a user's listener with `event`, if there is one. A listener never
 * breaks the call it observes: whatever it throws is dropped.
 * @internal
 */
export function notify<E>(listener: ((event: E) => void) | undefined, event: E): void {
  if (listener === undefined) return;
  try {
    listener(event);
  } catch {
    // Dropped on purpose: see above.
  }
}
