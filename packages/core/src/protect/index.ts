export { protect } from './protect.js';
export type {
  ProtectContext,
  ProtectedFunction,
  ProtectFallback,
  ProtectFallbackEvent,
  ProtectOptions,
  ProtectRejectEvent,
  ProtectRejectReason,
  ProtectRetryEvent,
  ProtectRunner,
  ProtectRunOptions,
  ProtectTimeoutEvent,
} from './types.js';
