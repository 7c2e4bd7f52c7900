export type { RouteProtection } from './protection.js';
export { createRouter } from './router.js';
export type {
  RouteContext,
  RouteExecuteOptions,
  RouteFailedEvent,
  RouteHealthOptions,
  RouteHedge,
  RouteHedgedEvent,
  RouteOperation,
  RouteProvider,
  RouteRecoveredEvent,
  Router,
  RouterOptions,
  RouteSelectedEvent,
  RouteSelection,
  RouteSelectionType,
  RouteSkippedEvent,
} from './types.js';
