import { onAbort } from '../internal/on-abort.js';
import type { InboundCall } from './inbound.js';

/**
 * Calls `onCancel` once when `inbound` is cancelled (at once if it already
 * is); returns the function that stops waiting. However many outbound calls a
 * handler fans out to, the inbound signal carries one listener. @internal
 */
export function onInboundCancel(inbound: InboundCall, onCancel: () => void): () => void {
  return onAbort(inbound.signal, onCancel);
}
