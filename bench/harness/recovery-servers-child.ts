// A chaos gRPC server and a chaos tRPC server in one child process, for the recovery and soak
// suites: they count every attempt per client (the call id up to its last `-`) and, with
// `arrivals` on (argv[2] = "1"), keep each attempt's arrival time, so a suite can bin what one
// client sent in any 100 ms. Prints {"grpcPort":N,"trpcPort":M} once listening, then answers
// line-delimited JSON commands on stdin: {"op":"setFault","fault":{…}} (both servers),
// {"op":"stop"} / {"op":"start"} (both stop listening / listen again on the same ports) — each
// answered with when it took effect (epoch ms) —
// {"op":"counts"} (attempts per call id), {"op":"arrivals"} (arrival times per client) and
// {"op":"stalls"} (this process's event-loop stalls: when and how long, epoch ms).
import {
  type ChaosFault,
  createChaosTrpcServer,
  grpcRulesFor,
  startGrpcChaosServer,
  trpcPlanFor,
} from '@breakwater/chaos';
import { serveCommands } from './command-loop.js';

const keepArrivals = process.argv[2] === '1';
const grpc = await startGrpcChaosServer({ replica: 'r0', seed: 1, maxObservations: 1_000_000 });
const trpc = await createChaosTrpcServer({ name: 'trpc', seed: 7 });

const perCall = new Map<string, number>();
const arrivals = new Map<string, number[]>();

function record(callId: string | undefined, at: number): void {
  if (callId === undefined) return;
  perCall.set(callId, (perCall.get(callId) ?? 0) + 1);
  if (!keepArrivals) return;
  const client = callId.slice(0, callId.lastIndexOf('-'));
  const list = arrivals.get(client);
  if (list) list.push(at);
  else arrivals.set(client, [at]);
}

// Both servers keep a bounded list of what they saw (tRPC's first 10 000 requests): move it
// here often enough that nothing is dropped, and reset it. Reading and resetting happen in
// one synchronous step, so no request falls between them.
function drain(): void {
  for (const o of grpc.observed) record(o.callId, o.receivedAt);
  grpc.reset();
  for (const o of trpc.stats().observed) record(o.callId, o.receivedAt);
  trpc.resetStats();
}
const drainer = setInterval(drain, 100);

// The soak asks whether a streak of failures came from this process stalling (GC, the loaded
// machine): a 10 ms ticker notes every tick more than STALL_MS late, with when it ended.
const TICK_MS = 10;
const STALL_MS = 50;
const stalls: { at: number; ms: number }[] = [];
let lastTick = performance.now();
const ticker = setInterval(() => {
  const now = performance.now();
  const late = now - lastTick - TICK_MS;
  lastTick = now;
  if (late >= STALL_MS && stalls.length < 100_000) {
    stalls.push({ at: performance.timeOrigin + now, ms: Math.round(late) });
  }
}, TICK_MS);

interface Command {
  id: number;
  op: 'setFault' | 'stop' | 'start' | 'counts' | 'arrivals' | 'stalls';
  fault?: ChaosFault;
}

async function handle(command: Command): Promise<unknown> {
  switch (command.op) {
    case 'setFault':
      grpc.setFaults(grpcRulesFor(command.fault));
      trpc.setFaults(trpcPlanFor(command.fault));
      return Date.now();
    case 'stop':
      drain();
      await Promise.all([grpc.stop(), trpc.stop()]);
      return Date.now();
    case 'start':
      await Promise.all([grpc.restart(), trpc.start()]);
      return Date.now();
    case 'counts':
      drain();
      return Object.fromEntries(perCall);
    case 'arrivals':
      drain();
      return Object.fromEntries(arrivals);
    case 'stalls':
      return stalls;
  }
}

serveCommands({ grpcPort: grpc.port, trpcPort: trpc.port }, handle, () => {
  clearInterval(drainer);
  clearInterval(ticker);
  void Promise.all([grpc.close(), trpc.close()]).then(() => process.exit(0));
});
