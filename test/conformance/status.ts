import type { EntryPoint } from './types.js';

// Issue 31: the core router admits a request to its bulkhead slot before its traversal, where
// each provider's circuit is asked; `admitCall`'s order (circuit before slot) is not its own yet.
const ROUTER_SLOT_FIRST =
  'the router takes a bulkhead slot (or a queue place) before its traversal asks the providers’ circuits, so a request every circuit refuses waits in the queue first';
const ROUTER_DEADLINE =
  'the router’s `timeoutMs` is each provider’s (`protection`), started at the visit, after the wait for a slot: the wait is not counted';

/**
 * Pairs (entry point, scenario id) known to fail on this branch, each with the
 * reason; `'*'` stands for every scenario of the entry point. They run as
 * `it.fails`: the suite stays green, and a pair that starts to pass fails the
 * suite until its line here is deleted, so this list can only shrink honestly.
 */
export const KNOWN_FAILURES: Partial<Record<EntryPoint, Readonly<Record<string, string>>>> = {
  router: {
    'admit-queue-counts-against-deadline': ROUTER_DEADLINE,
    'admit-open-circuit-takes-no-slot': ROUTER_SLOT_FIRST,
    'admit-refused-leaves-nothing': ROUTER_SLOT_FIRST,
  },
  'grpc-js routing channel': {
    'admit-open-circuit-takes-no-slot': ROUTER_SLOT_FIRST,
    'admit-refused-leaves-nothing': ROUTER_SLOT_FIRST,
  },
  'tRPC routingLink': {
    'admit-queue-counts-against-deadline': ROUTER_DEADLINE,
    'admit-open-circuit-takes-no-slot': ROUTER_SLOT_FIRST,
    'admit-refused-leaves-nothing': ROUTER_SLOT_FIRST,
  },
};
