import {
  type ChaosTrpcServer,
  createChaosTrpcServer,
  type GrpcChaosServer,
  type GrpcFaultRule,
  startGrpcChaosServer,
  type TrpcAttemptFault,
  type TrpcFaultPlan,
} from '@breakwater/chaos';
import { status as Status } from '@grpc/grpc-js';
import type { ServerAttempt, ServerScript, Step } from './types.js';

/** A started server of either transport, seen the same way. */
export interface ScriptedServer {
  readonly address: string;
  attempts(): ServerAttempt[];
  /** Plays `script` from the next attempt on, and forgets what the server saw so far. */
  play(script: ServerScript): void;
  close(): Promise<void>;
}

function grpcRule(step: Step, from: number, last: number | undefined): GrpcFaultRule {
  const range =
    last === undefined ? { fromAttempt: from } : { fromAttempt: from, firstAttempts: last };
  switch (step.kind) {
    case 'ok':
      return { ...range, latency: { kind: 'fixed', ms: step.delayMs ?? 0 } };
    case 'fail': {
      const rule: GrpcFaultRule = { ...range, status: Status[step.status] };
      if (step.pushback !== undefined) rule.pushbackMs = step.pushback;
      if (step.details !== undefined) rule.details = step.details;
      return rule;
    }
    case 'reset':
      return { ...range, resetAfterRequest: true };
    case 'hang':
      return { ...range, hang: true };
    case 'die-after-message':
      return { ...range, dieAfterMessage: true };
    case 'proxy-502':
      // A gRPC proxy (Envoy) answers UNAVAILABLE once it has taken the request.
      return { ...range, status: Status.UNAVAILABLE, details: 'chaos: proxy answered 502' };
  }
}

/** The chaos gRPC fault rules that play `script`: one rule per step, then the rest. */
export function grpcRules(script: ServerScript): GrpcFaultRule[] {
  const steps = script.steps ?? [];
  const rules = steps.map((step, i) => grpcRule(step, i + 1, i + 1));
  rules.push(grpcRule(script.rest ?? { kind: 'ok' }, steps.length + 1, undefined));
  return rules;
}

function trpcStep(step: Step): TrpcAttemptFault {
  switch (step.kind) {
    case 'ok':
      return { delayMs: step.delayMs ?? 0 };
    case 'fail': {
      if (step.status !== 'UNAVAILABLE') {
        throw new Error(`tRPC servers cannot send ${step.status} (the table says so for this row)`);
      }
      const p = step.pushback;
      const retryAfterSeconds = typeof p === 'number' ? String(p / 1000) : p;
      return {
        error:
          retryAfterSeconds === undefined
            ? { type: 'status', status: 503 }
            : { type: 'status', status: 503, retryAfterSeconds },
      };
    }
    case 'hang':
      return { hang: true };
    case 'proxy-502':
      return { error: { type: 'html', status: 502 } };
    case 'reset':
      return { error: { type: 'reset' } };
    case 'die-after-message':
      throw new Error('tRPC servers cannot die between the message and the status');
  }
}

/** The chaos tRPC fault plan that plays `script`. */
export function trpcPlan(script: ServerScript): TrpcFaultPlan {
  const steps = (script.steps ?? []).map(trpcStep);
  const rest = trpcStep(script.rest ?? { kind: 'ok' });
  const plan: TrpcFaultPlan = { steps };
  if (rest.hang) return { ...plan, hangRate: 1 };
  if (rest.error) return { ...plan, errorRate: 1, error: rest.error };
  if (rest.delayMs) return { ...plan, latency: { kind: 'fixed', ms: rest.delayMs } };
  return plan;
}

const TRPC_OUTCOMES: Record<number, string> = { 200: 'OK', 502: 'BAD_GATEWAY', 503: 'UNAVAILABLE' };

function fromGrpc(server: GrpcChaosServer, name: 'primary' | 'secondary'): ScriptedServer {
  return {
    address: server.address,
    attempts: () =>
      server.observed.map((o) => ({
        server: name,
        callId: o.callId ?? '',
        receivedAt: o.receivedAt,
        outcome: o.outcome,
      })),
    play(script) {
      server.setFaults(grpcRules(script));
      server.reset();
    },
    close: () => server.close(),
  };
}

function fromTrpc(server: ChaosTrpcServer, name: 'primary' | 'secondary'): ScriptedServer {
  return {
    address: server.url,
    attempts: () =>
      server.stats().observed.map((o) => ({
        server: name,
        callId: o.callId,
        receivedAt: o.receivedAt,
        outcome:
          o.outcome === 'cancelled'
            ? 'CANCELLED'
            : o.outcome === undefined
              ? undefined
              : (TRPC_OUTCOMES[o.httpStatus ?? 0] ?? `HTTP_${o.httpStatus}`),
      })),
    play(script) {
      server.setFaults(trpcPlan(script));
      server.resetStats();
    },
    close: () => server.close(),
  };
}

/** Starts a server of `transport` playing `script` (stopped at once when the script says `down`). */
export async function startScripted(
  transport: 'grpc' | 'trpc',
  name: 'primary' | 'secondary',
  script: ServerScript,
): Promise<ScriptedServer> {
  if (transport === 'grpc') {
    const server = await startGrpcChaosServer({ replica: name, faults: grpcRules(script) });
    if (script.down) await server.stop();
    return fromGrpc(server, name);
  }
  const server = await createChaosTrpcServer({ name, faults: trpcPlan(script) });
  if (script.down) await server.stop();
  return fromTrpc(server, name);
}
