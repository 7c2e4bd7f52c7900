/** A subscription returned by every `onX(listener)`; call `dispose()` to stop listening. */
export interface Disposable {
  /** Removes the listener; calling it again does nothing. */
  dispose(): void;
}

/** Subscribes a listener to one kind of event. */
export type Subscribe<T> = (listener: (event: T) => void) => Disposable;

/**
 * A tiny typed event emitter. Emitting with no listeners costs one length check,
 * so events stay off the hot path's bill. Listener errors are swallowed so an
 * observer can never break the call it observes.
 * @internal
 */
export class EventEmitter<T> {
  private listeners: Array<(event: T) => void> = [];

  /** True when at least one listener is subscribed. */
  get active(): boolean {
    return this.listeners.length > 0;
  }

  /** The subscribe function to expose as `onX`. */
  readonly on: Subscribe<T> = (listener) => {
    this.listeners = [...this.listeners, listener];
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        this.listeners = this.listeners.filter((l) => l !== listener);
      },
    };
  };

  emit(event: T): void {
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) {
      try {
        (ls[i] as (event: T) => void)(event);
      } catch {
        // An observer must never break the call it observes.
      }
    }
  }
}
