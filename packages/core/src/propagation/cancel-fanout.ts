import type { InboundCall } from './inbound.js';

type Listener = () => void;

/**
 * The outbound calls waiting on one inbound call's cancellation, behind a
 * single listener on its signal: however many calls a handler fans out to,
 * the signal never collects listeners (Node warns past ten), and the listener
 * leaves with the last of them.
 */
class CancelFanout {
  readonly listeners = new Set<Listener>();

  constructor(private readonly inbound: InboundCall) {
    inbound.signal.addEventListener('abort', this, { once: true });
  }

  handleEvent(): void {
    fanouts.delete(this.inbound);
    for (const listener of this.listeners) listener();
    this.listeners.clear();
  }

  remove(listener: Listener): void {
    if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
    this.inbound.signal.removeEventListener('abort', this);
    fanouts.delete(this.inbound);
  }
}

const fanouts = new WeakMap<InboundCall, CancelFanout>();

/**
 * Calls `onCancel` once when `inbound` is cancelled (at once if it already
 * is); returns the function that stops waiting. @internal
 */
export function onInboundCancel(inbound: InboundCall, onCancel: Listener): () => void {
  if (inbound.signal.aborted) {
    onCancel();
    return () => {};
  }
  let fanout = fanouts.get(inbound);
  if (fanout === undefined) {
    fanout = new CancelFanout(inbound);
    fanouts.set(inbound, fanout);
  }
  const own = fanout;
  own.listeners.add(onCancel);
  return () => own.remove(onCancel);
}
