// The ambient inbound call, in Node's AsyncLocalStorage: Node-only, exported
// from `@breakwater/core/node`.
import { AsyncLocalStorage } from 'node:async_hooks';
import { type InboundCall, registerInboundProvider } from './inbound.js';

const STORAGE = Symbol.for('@breakwater/core/inbound-storage');

// One storage per process, even when an ESM and a CJS copy of core are both loaded.
const holder = globalThis as { [STORAGE]?: AsyncLocalStorage<InboundCall> };
holder[STORAGE] ??= new AsyncLocalStorage<InboundCall>();
const storage = holder[STORAGE];
registerInboundProvider(() => storage.getStore());

/**
 * Runs `fn` serving `call`: every Breakwater client stack inside it (and in
 * what it awaits) inherits the call's deadline, cancellation and attempt.
 * Server bindings call it; a handler needs no code of its own.
 */
export function runInbound<T>(call: InboundCall, fn: () => T): T {
  return storage.run(call, fn);
}
