import type { ErrorVerdict, Router } from '@breakwater/core';
import type { GrpcStatusClassifier } from '@breakwater/core/grpc';
import type { PropagatePlan } from '@breakwater/core/internal';
import type { Clock } from '@breakwater/core/time';
import type { ChannelInterface } from '@grpc/grpc-js';
import { TargetAttemptError } from './target-attempt-error.js';

/** A target after validation: its id, the grpc-js channel calls go to, and whether we own it. @internal */
export interface RoutingTargetRuntime {
  readonly id: string;
  /** Address given to the health probe. */
  readonly address: string;
  readonly channel: ChannelInterface;
  /** Created by the routing channel (closed by its `close()`). */
  readonly owned: boolean;
}

/**
 * The routers and settings of the client's options, or of one `methods`
 * entry merged over them. Each has its own routers, so its own circuit per
 * target; all share the targets and the health registry. @internal
 */
export interface RoutingStack {
  /** Routes calls whose request is complete and safe to repeat: failover, retries, hedging. */
  readonly safe: Router<RoutingTargetRuntime>;
  /** Routes every other call: one target, no retry, no failover, no hedge. May be `safe` itself. */
  readonly pinned: Router<RoutingTargetRuntime>;
  /** Deadline of the whole call in ms (the earlier of it and the caller's wins), or undefined. */
  readonly timeoutMs: number | undefined;
  /** Per-attempt deadline in ms, or undefined. */
  readonly perAttemptTimeoutMs: number | undefined;
  /** Whether a method (full path) is safe to repeat. */
  isSafe(path: string): boolean;
}

/** What every routed call of one routing channel shares. @internal */
export interface RoutingState {
  /** The stack a call of method `path` runs on. */
  stackFor(path: string): RoutingStack;
  /** Records a failure a router of `stack` did not see (a stream broken after commit) for the target's health and circuit. */
  targetFailed(stack: RoutingStack, targetId: string): void;
  readonly classify: GrpcStatusClassifier;
  readonly clock: Clock;
  /** Numbers calls for `getCallNumber()`. */
  nextCallNumber(): number;
  /** True once the routing channel was closed. */
  readonly closed: boolean;
  /** Inheritance from the inbound call, or `undefined` when `propagate: false`. */
  readonly propagate: PropagatePlan | undefined;
}

// Verdicts the routed call hands to the router, shared so judging allocates nothing.
/** Lost to another attempt: neutral, and it must not stop the request. @internal */
export const LOST: ErrorVerdict = Object.freeze({
  retry: false,
  failover: true,
  countForCircuit: false,
});
/** A failure the call must report as is, counted for the target's health. @internal */
export const STOP_COUNTED: ErrorVerdict = Object.freeze({
  retry: false,
  failover: false,
  countForCircuit: true,
});
/** A failure the call must report as is, neutral for health. @internal */
export const STOP_NEUTRAL: ErrorVerdict = Object.freeze({
  retry: false,
  failover: false,
  countForCircuit: false,
});

/**
 * The routers' default error policy: attempts carry their verdict; anything
 * else (e.g. `createCall` threw) ends the request without blaming the target.
 * Each routed call passes its own, which also judges the router's cut of a
 * hung attempt (see `RoutedCall`).
 * @internal
 */
export function routingErrorPolicy(error: unknown): ErrorVerdict {
  return error instanceof TargetAttemptError ? error.verdict : STOP_NEUTRAL;
}
