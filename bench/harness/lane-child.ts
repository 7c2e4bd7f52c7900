// One client of the adapters suite in its own process, so that lanes never
// share a JIT: in one process, grpc-js's and nice-grpc's call paths see every
// lane's objects and turn polymorphic, which slowed a stub-channel run of both
// lanes by several µs per call. Built from the JSON `LaneSpec` in argv[2];
// prints {"ready":true}, then answers {"id":N,"op":"run","concurrency":C,"ms":T}
// with one closed-loop round's figures, and exits when its stdin closes.
import { adapterLane, type LaneSpec } from '../suites/adapter-lanes.js';
import { AllocationMeter } from './allocation.js';
import { closedLoop, type RoundFigures, roundFigures } from './closed-loop.js';
import { serveCommands } from './command-loop.js';

const spec = JSON.parse(process.argv[2] ?? '{}') as LaneSpec;
const lane = adapterLane(spec);
/** The one request every lane sends (the chaos servers count attempts by call id). */
const CALL = { callId: 'bench', index: 0 };
const call = () => lane.call(CALL);

interface Command {
  id: number;
  op: 'run';
  concurrency: number;
  ms: number;
}

const allocation = new AllocationMeter();

async function handle(command: Command): Promise<RoundFigures> {
  allocation.start();
  const before = process.cpuUsage();
  const loop = await closedLoop(call, command.concurrency, command.ms);
  const cpu = process.cpuUsage(before);
  const bytes = allocation.stop();
  const round = roundFigures(loop);
  const calls = Math.max(1, round.calls);
  // The loop's own latency list is allocated too, alike in every lane (8 B a call or less).
  return { ...round, clientCpuUs: (cpu.user + cpu.system) / calls, clientBytes: bytes / calls };
}

serveCommands({ ready: true }, handle, () => {
  lane.close();
  process.exit(0);
});
