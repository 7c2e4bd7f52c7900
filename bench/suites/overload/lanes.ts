/**
 * The clients of the `overload` suite: one grpc-js Echo client each, every
 * call with the same deadline and no retries, so the only difference is what
 * limits the calls in flight. A lane's call resolves with `'ok'`, `'refused'`
 * (its own limiter turned the call away, the server never saw it) or
 * `'failed'` (deadline, or the server's refusal).
 */
import { callMetadata, createEchoClient, type EchoClient } from '@breakwater/chaos';
import { isConcurrencyLimitError, isQueueFullError } from '@breakwater/core';
import {
  disableGrpcRetries,
  type ResilienceCallOptions,
  type ResilienceInterceptorOptions,
  resilienceInterceptor,
} from '@breakwater/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { bulkhead, isBulkheadRejectedError } from 'cockatiel';
import type { CallOutcome, Tier } from '../../harness/overload-goals.js';

/** The adaptive lane's name, which the goal rows look for. */
export const ADAPTIVE_LANE = 'Breakwater concurrency: { adaptive }';

/** Every call's deadline, ms. */
export const DEADLINE_MS = 500;

/** One client of the comparison. */
export interface OverloadLane {
  name: string;
  /** Makes one call; `tier` is the call's criticality (lanes without tiers ignore it). */
  call(tier: Tier): Promise<CallOutcome>;
  close(): void;
}

/** One Echo call with the suite's deadline; `options` adds per-call options (a Breakwater lane's `criticality`). */
function unary(client: EchoClient, options: ResilienceCallOptions = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    client.Unary(
      { message: 'x' },
      callMetadata(),
      { ...options, deadline: Date.now() + DEADLINE_MS },
      (error: ServiceError | null) => (error ? reject(error) : resolve()),
    );
  });
}

/** Runs `call`, telling a refusal (`refused(error)`) from any other failure. */
async function outcomeOf(
  call: () => Promise<void>,
  refused: (error: unknown) => boolean,
): Promise<CallOutcome> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    return refused(error) ? 'refused' : 'failed';
  }
}

/** Breakwater's refusals (a full bulkhead, or the adaptive limit) reach grpc-js callers with the core error as `cause`. */
const breakwaterRefusal = (error: unknown) => {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return isQueueFullError(cause) || isConcurrencyLimitError(cause);
};

/** A plain grpc-js client: every call goes to the server. */
function noLimitLane(address: string): OverloadLane {
  const client = createEchoClient(address, disableGrpcRetries);
  return {
    name: 'no limit',
    call: () =>
      outcomeOf(
        () => unary(client),
        () => false,
      ),
    close: () => client.close(),
  };
}

/**
 * `resilienceInterceptor` with nothing but `concurrency` (no retry, circuit,
 * budget or own deadline). Every call carries its tier as `criticality`,
 * which only the adaptive limit reads.
 */
function breakwaterLane(
  name: string,
  address: string,
  concurrency: NonNullable<ResilienceInterceptorOptions['concurrency']>,
): OverloadLane {
  const interceptor = resilienceInterceptor({
    timeoutMs: false,
    attemptTimeoutMs: false,
    retry: false,
    circuit: false,
    budget: false,
    concurrency,
  });
  const client = createEchoClient(address, { ...disableGrpcRetries, interceptors: [interceptor] });
  return {
    name,
    call: (tier) => outcomeOf(() => unary(client, { criticality: tier }), breakwaterRefusal),
    close: () => client.close(),
  };
}

/** cockatiel's `bulkhead(limit)` (no queue) around a plain grpc-js client. */
function cockatielLane(address: string, limit: number): OverloadLane {
  const client = createEchoClient(address, disableGrpcRetries);
  const policy = bulkhead(limit);
  return {
    name: `cockatiel bulkhead(${limit})`,
    call: () => outcomeOf(() => policy.execute(() => unary(client)), isBulkheadRejectedError),
    close: () => client.close(),
  };
}

/** A lane by name, made fresh for every run so no limit carries what it learned into the next. */
export interface LaneSpec {
  name: string;
  create(address: string): OverloadLane;
}

/**
 * Every lane, in table order. cockatiel's bulkhead is sized to the server's
 * workers: the best a static limit can do is be told the capacity (and be
 * wrong once it changes).
 */
export function overloadLanes(workers: number): LaneSpec[] {
  const breakwater = (limit: number): LaneSpec => {
    const name = `Breakwater concurrency: { limit: ${limit} }`;
    return { name, create: (address) => breakwaterLane(name, address, { limit }) };
  };
  return [
    { name: 'no limit', create: noLimitLane },
    breakwater(4),
    breakwater(256),
    {
      name: ADAPTIVE_LANE,
      create: (address) => breakwaterLane(ADAPTIVE_LANE, address, { adaptive: true }),
    },
    {
      name: `cockatiel bulkhead(${workers})`,
      create: (address) => cockatielLane(address, workers),
    },
  ];
}
