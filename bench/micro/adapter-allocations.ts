/**
 * What each adapter lane allocates per call against a real server, by owner
 * (Breakwater's packages, the framework, Node, …) and by Breakwater
 * function, from V8's sampling heap profiler with collected objects counted.
 * Unlike throughput and CPU time on this VM (see BENCHMARKS.md), bytes
 * allocated per call barely move between runs (a few hundred bytes per
 * function, from sampling), so this is where a change to the per-call path
 * shows first; GC time follows allocation.
 *
 * Each lane is built in this process (one after another, `--warmup` calls
 * first), against the chaos Echo server in a child process, one call at a
 * time.
 *
 * Run: cd bench && node --import tsx micro/adapter-allocations.ts
 *      [--adapter nice-grpc] [--variants bareDeadline,stack,stackNoDeadline] [--calls 6000] [--warmup 3000] [--top 12]
 */
import { parseArgs } from 'node:util';
import { spawnGrpcChaosServer } from '@breakwater/chaos';
import { spawnTrpcServer } from '../harness/children.js';
import { allocationsWhile, attributeAllocations } from '../harness/profile.js';
import { type AdapterName, adapterLane, type Variant } from '../suites/adapter-lanes.js';

const { values } = parseArgs({
  options: {
    adapter: { type: 'string', default: 'nice-grpc' },
    variants: { type: 'string', default: 'bareDeadline,stack,stackNoDeadline' },
    calls: { type: 'string', default: '6000' },
    warmup: { type: 'string', default: '3000' },
    top: { type: 'string', default: '12' },
  },
});

const adapter = values.adapter as AdapterName;
const calls = Number(values.calls);
const warmup = Number(values.warmup);
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

const server =
  adapter === 'trpc'
    ? await spawnTrpcServer().then((s) => ({ address: s.url, close: s.close }))
    : await spawnGrpcChaosServer({ replica: 'bench', startTimeoutMs: 30_000, maxObservations: 1 });
try {
  console.log(`${adapter}: bytes allocated per call, ${calls} calls after ${warmup}, c=1`);
  for (const variant of values.variants.split(',') as Variant[]) {
    const lane = adapterLane({ adapter, variant, address: server.address });
    try {
      for (let i = 0; i < warmup; i++) await lane.call({ callId: 'bench', index: i });
      const { head } = await allocationsWhile(async () => {
        for (let i = 0; i < calls; i++) await lane.call({ callId: 'bench', index: i });
      });
      const a = attributeAllocations(head, calls, Number(values.top));
      const owners = Object.entries(a.byOwner)
        .sort((x, y) => y[1] - x[1])
        .map(([owner, bytes]) => `${owner} ${kb(bytes)}`)
        .join(' · ');
      console.log(`\n${variant}: ${kb(a.bytesPerCall)} per call (${owners})`);
      for (const f of a.breakwater) {
        console.log(`  ${f.bytesPerCall.toFixed(0).padStart(6)} B  ${f.name}`);
      }
    } finally {
      lane.close();
    }
  }
} finally {
  await server.close();
}
