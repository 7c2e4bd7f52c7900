import { neverAbortedSignal } from './abort.js';

type Listener = () => void;

/**
 * The callbacks waiting on one signal, behind a single listener of their own:
 * however many calls share a caller's signal, it never collects a listener
 * per call (Node warns past ten), and the listener leaves with the last of
 * them.
 */
class AbortFanout {
  readonly listeners = new Set<Listener>();

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this, { once: true });
  }

  handleEvent(): void {
    fanouts.delete(this.signal);
    for (const listener of this.listeners) {
      // As an event target does: one listener's throw neither stops the others nor disappears.
      try {
        listener();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.listeners.clear();
  }

  remove(listener: Listener): void {
    if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
    if (fanouts.get(this.signal) !== this) return;
    this.signal.removeEventListener('abort', this);
    fanouts.delete(this.signal);
  }
}

const fanouts = new WeakMap<AbortSignal, AbortFanout>();

const stayed = () => {};

/**
 * Calls `listener` once when `signal` aborts (at once if it already has);
 * returns the function that stops waiting. However many calls wait on one
 * signal, it carries one listener, gone when the last of them stops.
 * @internal
 */
export function onAbort(signal: AbortSignal, listener: Listener): () => void {
  if (signal.aborted) {
    listener();
    return stayed;
  }
  if (signal === neverAbortedSignal) return stayed;
  let fanout = fanouts.get(signal);
  if (fanout === undefined) {
    fanout = new AbortFanout(signal);
    fanouts.set(signal, fanout);
  }
  const own = fanout;
  // Each wait is its own entry, even when one function waits twice.
  const entry = () => listener();
  own.listeners.add(entry);
  return () => own.remove(entry);
}
