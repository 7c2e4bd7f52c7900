/**
 * Instructions per call of adapter lanes against a real server, counted by
 * valgrind: on this kind of VM neither throughput nor CPU time holds still to
 * a few percent (no steal time is reported, so time the host takes is billed
 * to the guest's running process), but the number of instructions a call
 * executes drifts less.
 *
 * Each lane of the adapters suite runs in a client process under
 * `valgrind --tool=cachegrind` (all threads: JIT compiler and GC included)
 * for `--from` and then `--to` sequential calls against the chaos Echo server
 * (a normal process); the difference over `to − from` calls is the steady
 * per-call count, start-up and early JIT work cancelled out. JIT and GC work
 * is still counted and its timing varies: runs of one lane at 3 500 → 7 500
 * spread by up to 21% (nice-grpc bare + header 648–726 k, full stack
 * 666–809 k, five runs each), so repeat each lane and compare medians.
 * Needs valgrind (`apt-get install valgrind`); a lane at 7 500 calls takes a
 * few minutes, and the two runs of a lane run in parallel.
 *
 * Run: cd bench && node --import tsx micro/adapter-instructions.ts
 *      [--adapter nice-grpc] [--variants bareDeadline,stack,stackNoDeadline] [--from 3500] [--to 7500]
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { spawnGrpcChaosServer } from '@breakwater/chaos';
import { tsxArgs } from '../harness/children.js';
import {
  type AdapterName,
  adapterLane,
  type LaneSpec,
  type Variant,
} from '../suites/adapter-lanes.js';

const { values } = parseArgs({
  options: {
    adapter: { type: 'string', default: 'nice-grpc' },
    variants: { type: 'string', default: 'bareDeadline,stack,stackNoDeadline' },
    from: { type: 'string', default: '3500' },
    to: { type: 'string', default: '7500' },
    child: { type: 'string' },
    calls: { type: 'string' },
  },
});

/** The instruction total valgrind prints (`I refs: 1,234`), or undefined. */
export function parseInstructionTotal(output: string): number | undefined {
  const match = /I\s+refs:\s+([\d,]+)/.exec(output);
  return match ? Number((match[1] as string).replaceAll(',', '')) : undefined;
}

/** Runs `calls` sequential calls of one lane under cachegrind and returns its instruction total. */
function countInstructions(spec: LaneSpec, calls: number): Promise<number> {
  const args = [
    '--tool=cachegrind',
    '--cache-sim=no',
    '--cachegrind-out-file=/dev/null',
    process.execPath,
    ...tsxArgs(fileURLToPath(import.meta.url), [
      '--child',
      JSON.stringify(spec),
      '--calls',
      String(calls),
    ]),
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    proc.once('error', (error) => reject(new Error(`valgrind did not start: ${error.message}`)));
    proc.once('exit', (code) => {
      const total = parseInstructionTotal(stderr);
      if (code !== 0 || total === undefined) {
        reject(new Error(`${spec.variant}: valgrind exited with ${code}\n${stderr.slice(-2000)}`));
      } else {
        resolve(total);
      }
    });
  });
}

if (values.child !== undefined) {
  const lane = adapterLane(JSON.parse(values.child) as LaneSpec);
  const calls = Number(values.calls);
  for (let i = 0; i < calls; i++) await lane.call({ callId: 'bench', index: i });
  lane.close();
  process.exit(0);
} else {
  const from = Number(values.from);
  const to = Number(values.to);
  if (!(to > from && from >= 0))
    throw new RangeError(`--to must exceed --from, got ${from} → ${to}`);
  const server = await spawnGrpcChaosServer({
    replica: 'bench',
    startTimeoutMs: 30_000,
    maxObservations: 1,
  });
  try {
    console.log(`${values.adapter}: instructions per call between calls ${from} and ${to}`);
    for (const variant of values.variants.split(',') as Variant[]) {
      const spec: LaneSpec = {
        adapter: values.adapter as AdapterName,
        variant,
        address: server.address,
      };
      const [a, b] = await Promise.all([
        countInstructions(spec, from),
        countInstructions(spec, to),
      ]);
      console.log(
        `${variant.padEnd(16)} ${((b - a) / (to - from) / 1000).toFixed(0).padStart(6)} k`,
      );
    }
  } finally {
    await server.close();
  }
}
