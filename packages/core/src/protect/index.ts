export { protect } from './protect.js';
export type {
  ProtectBackoff,
  ProtectCircuit,
  ProtectContext,
  ProtectedFunction,
  ProtectFallback,
  ProtectFallbackEvent,
  ProtectOptions,
  ProtectRejectEvent,
  ProtectRejectReason,
  ProtectRetryBudget,
  ProtectRetryEvent,
  ProtectRunner,
  ProtectRunOptions,
  ProtectTimeoutEvent,
} from './types.js';
