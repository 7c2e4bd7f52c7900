import { createChaosTrpcServer, startGrpcChaosServer } from '@breakwater/chaos';
import { systemSleep } from '@breakwater/core/time';
import { status as Status } from '@grpc/grpc-js';
import { DRIVERS } from '../conformance/drivers.js';
import type { EntryPoint, Harness } from '../conformance/types.js';

/** A chaos server (of `entry`'s transport) that can be switched to fail every attempt, counting what it sees. */
export interface Upstream {
  readonly address: string;
  fail(on: boolean): void;
  /** Stops listening (connections refused) or listens again on the same port. */
  down(on: boolean): Promise<void>;
  attempts(): number;
  /** Attempts of one call (by its `x-call-id`). */
  attemptsOf(callId: string): number;
  close(): Promise<void>;
}

/** Starts a chaos server for `entry` on 127.0.0.1:0. */
export async function upstreamFor(entry: EntryPoint): Promise<Upstream> {
  if (DRIVERS[entry].transport === 'grpc') {
    const server = await startGrpcChaosServer();
    return {
      address: server.address,
      fail: (on) => server.setFaults(on ? [{ status: Status.UNAVAILABLE }] : []),
      down: (on) => (on ? server.stop() : server.restart()),
      attempts: () => server.total(),
      attemptsOf: (callId) => server.attempts(callId),
      close: () => server.close(),
    };
  }
  const server = await createChaosTrpcServer();
  return {
    address: server.url,
    fail: (on) => server.setFaults(on ? { errorRate: 1 } : {}),
    down: (on) => (on ? server.stop() : server.start()),
    attempts: () => server.stats().requests,
    attemptsOf: (callId) => server.stats().attempts[callId] ?? 0,
    close: () => server.close(),
  };
}

export interface Outcome {
  startedAt: number;
  settledAt: number;
  ok: boolean;
}

/**
 * Starts a call every `tickMs` (open loop) for `ms`, then waits for them all. `lagMs` is the
 * most a tick started late: how far this loaded machine's timers slipped.
 */
export async function drive(
  harness: Harness,
  ms: number,
  phase: string,
  tickMs: number,
): Promise<{ outcomes: Outcome[]; lagMs: number; startedAt: number }> {
  const startedAt = performance.now();
  const pending: Promise<Outcome>[] = [];
  let lagMs = 0;
  for (let i = 0; i * tickMs < ms; i++) {
    const due = startedAt + i * tickMs;
    const wait = due - performance.now();
    if (wait > 0) await systemSleep(wait);
    const at = performance.now();
    lagMs = Math.max(lagMs, at - due);
    pending.push(
      harness.call(`${phase}-${i}`, {}).then((o) => ({
        startedAt: at,
        settledAt: at + o.elapsedMs,
        ok: o.code === 'OK',
      })),
    );
  }
  return { outcomes: await Promise.all(pending), lagMs, startedAt };
}
