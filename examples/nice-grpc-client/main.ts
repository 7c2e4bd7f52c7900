// A nice-grpc client with resilienceMiddleware against an in-process chaos
// Echo server that turns flaky, then goes down, then slow. Retries hide the
// flakes, the circuit stops hammering the dead server, the deadline (which
// the server observes) cuts the slow calls short.
// Run: pnpm start (in this folder).
import {
  CALL_ID_HEADER,
  type EchoRequest,
  type EchoResponse,
  echoClientConstructor,
  type GrpcFaultRule,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import { isCircuitOpenError } from '@breakwater/core';
import { idempotentMethods } from '@breakwater/core/grpc';
import { resilienceMiddleware } from '@breakwater/nice-grpc';
import { type MethodDefinition, status } from '@grpc/grpc-js';
import { ClientError, createChannel, createClientFactory, Metadata } from 'nice-grpc';

/** What the client and the server saw in one phase. */
export interface PhaseReport {
  ok: number;
  failed: Record<string, number>;
  /** Attempts that reached the server. */
  serverAttempts: number;
  /** Largest time left the server saw on an attempt's deadline, in ms. */
  maxDeadlineSeenMs: number | undefined;
}

/** A proto-loader unary method, typed for nice-grpc (ts-proto definitions come typed). */
type Unary<Req, Res> = MethodDefinition<Req, Res> & { requestStream: false; responseStream: false };

/** Runs the scenario; resolves with a report per phase. */
export async function main(log: (line: string) => void = console.log) {
  const server = await startGrpcChaosServer({ seed: 7 });
  const channel = createChannel(server.address);
  const client = createClientFactory()
    .use(
      resilienceMiddleware({
        idempotent: idempotentMethods(loadEchoPackageDefinition()),
        timeoutMs: 300,
        circuit: { failureThreshold: 3, failureSpanMs: 0, openDurationMs: 60_000 },
        retry: { attempts: 4, backoff: { baseDelayMs: 5 } },
      }),
    )
    .create(
      echoClientConstructor().service as { Unary: Unary<EchoRequest, EchoResponse> },
      channel,
    );

  const reports: Record<string, PhaseReport> = {};
  const phase = async (name: string, faults: GrpcFaultRule[], calls: number) => {
    server.setFaults(faults);
    server.reset();
    const report: PhaseReport = { ok: 0, failed: {}, serverAttempts: 0, maxDeadlineSeenMs: 0 };
    for (let i = 0; i < calls; i++) {
      const metadata = Metadata({ [CALL_ID_HEADER]: `${name}-${i}` });
      try {
        await client.Unary({ message: String(i) }, { metadata });
        report.ok++;
      } catch (error) {
        if (!(error instanceof ClientError)) throw error;
        const why = isCircuitOpenError(error.cause)
          ? 'circuit open'
          : (status[error.code] ?? String(error.code));
        report.failed[why] = (report.failed[why] ?? 0) + 1;
      }
    }
    report.serverAttempts = server.total();
    report.maxDeadlineSeenMs = Math.max(...server.observed.map((o) => o.deadlineRemainingMs ?? 0));
    reports[name] = report;
    log(
      `${name.padEnd(8)} ok ${String(report.ok).padStart(2)}/${calls}, failed ${JSON.stringify(report.failed)}, ` +
        `server saw ${report.serverAttempts} attempts (deadline <= ${report.maxDeadlineSeenMs} ms)`,
    );
  };

  try {
    await phase('slow', [{ latency: { kind: 'fixed', ms: 1_000 } }], 2);
    await phase('flaky', [{ status: status.UNAVAILABLE, rate: 0.2 }], 30);
    await phase('down', [{ status: status.UNAVAILABLE }], 10);
  } finally {
    channel.close();
    await server.close();
  }
  return reports;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
