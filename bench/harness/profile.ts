/**
 * Where a lane's CPU goes, from a V8 CPU profile of a measured window: self
 * time per call by owner (Breakwater's packages, the RPC framework, Node,
 * the garbage collector, …) and Breakwater's own most expensive functions.
 *
 * Throughput on this kind of machine drifts by more than the few percent the
 * adapter targets are about, and so does CPU time (time the host takes is
 * billed to the guest); the split of one run's CPU by owner still says how
 * much of a call is Breakwater's own code.
 */
import { Session } from 'node:inspector/promises';

/** The parts of a `.cpuprofile` (Chrome DevTools `Profiler.Profile`) read here. */
export interface CpuProfile {
  nodes: ReadonlyArray<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }>;
  /** Node id of each sample. */
  samples: readonly number[];
  /** µs since the previous sample, one per sample. */
  timeDeltas: readonly number[];
}

/** Who owns a frame: see {@link ownerOf}. */
export type Owner =
  | 'breakwater'
  | 'grpc-js'
  | 'nice-grpc'
  | 'trpc'
  | 'node'
  | 'native'
  | 'gc'
  | 'program'
  | 'idle'
  | 'bench'
  | 'other';

/** One Breakwater function's self time. */
export interface HotFunction {
  /** `name (package/file.ts)`. */
  name: string;
  usPerCall: number;
}

/** Self time per call of each owner, and Breakwater's hottest functions. */
export interface Attribution {
  calls: number;
  /** µs per call by owner; owners with no samples are absent. */
  usPerCall: Partial<Record<Owner, number>>;
  /** µs per call on the CPU (every owner but `idle`). */
  busyUsPerCall: number;
  /** Breakwater's functions, most expensive first (at most `top`). */
  breakwater: HotFunction[];
}

/** The owner of a frame, from its URL (pnpm's store paths name the package) or V8's pseudo-frames. */
export function ownerOf(frame: { functionName: string; url: string }): Owner {
  const { functionName, url } = frame;
  if (url === '') {
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(program)') return 'program';
    return 'native';
  }
  if (url.startsWith('node:')) return 'node';
  if (/\/packages\/[^/]+\/src\//.test(url) || url.includes('/@breakwater/')) return 'breakwater';
  if (url.includes('/@grpc/grpc-js/') || url.includes('/@grpc+grpc-js@')) return 'grpc-js';
  if (/\/(nice-grpc[^/]*|abort-controller-x)\//.test(url)) return 'nice-grpc';
  if (url.includes('/@trpc/')) return 'trpc';
  if (url.includes('/bench/')) return 'bench';
  return 'other';
}

/** `name (package/file.ts)` of a Breakwater frame. */
function breakwaterName(frame: { functionName: string; url: string }): string {
  const at = /\/packages\/([^/]+)\/src\/(.+)$/.exec(frame.url);
  const where = at ? `${at[1]}/${at[2]}` : frame.url;
  return `${frame.functionName || '(anonymous)'} (${where})`;
}

/** The `top` largest entries of `byName`, largest first. */
function topOf(byName: Map<string, number>, top: number): Array<[string, number]> {
  return [...byName].sort((a, b) => b[1] - a[1]).slice(0, top);
}

/** Self time per call in `profile`, over `calls` calls (at least 1), with the `top` hottest Breakwater functions. */
export function attributeProfile(profile: CpuProfile, calls: number, top = 10): Attribution {
  const perCall = 1 / Math.max(1, calls);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const usPerCall: Partial<Record<Owner, number>> = {};
  const ours = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id);
    if (us === undefined) continue;
    const owner = ownerOf(node.callFrame);
    usPerCall[owner] = (usPerCall[owner] ?? 0) + us * perCall;
    if (owner !== 'idle') busy += us * perCall;
    if (owner === 'breakwater') {
      const name = breakwaterName(node.callFrame);
      ours.set(name, (ours.get(name) ?? 0) + us * perCall);
    }
  }
  const breakwater = topOf(ours, top).map(([name, us]) => ({ name, usPerCall: us }));
  return { calls, usPerCall, busyUsPerCall: busy, breakwater };
}

/**
 * Runs `work` inside an inspector session of this process: `start` before it,
 * `stop` after it (also when it throws), and returns both results.
 */
async function inspectWhile<T, S>(
  work: () => Promise<T>,
  start: (session: Session) => Promise<unknown>,
  stop: (session: Session) => Promise<S>,
): Promise<{ result: T; stopped: S }> {
  const session = new Session();
  session.connect();
  try {
    await start(session);
    let result: T;
    try {
      result = await work();
    } catch (error) {
      await stop(session);
      throw error;
    }
    return { result, stopped: await stop(session) };
  } finally {
    session.disconnect();
  }
}

/** Profiles this process while `work` runs (sampling every `intervalUs`), and returns the profile. */
export async function profileWhile<T>(
  work: () => Promise<T>,
  intervalUs = 100,
): Promise<{ result: T; profile: CpuProfile }> {
  const { result, stopped } = await inspectWhile(
    work,
    async (session) => {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
      await session.post('Profiler.start');
    },
    (session) => session.post('Profiler.stop'),
  );
  return { result, profile: stopped.profile as unknown as CpuProfile };
}

/** The parts of a sampling heap profile (`HeapProfiler.SamplingHeapProfile`) read here. */
export interface HeapProfileNode {
  callFrame: { functionName: string; url: string };
  /** Bytes allocated by this frame itself (sampled). */
  selfSize: number;
  children: readonly HeapProfileNode[];
}

/** Bytes allocated per call, in total, by owner and by Breakwater function. */
export interface AllocationAttribution {
  calls: number;
  bytesPerCall: number;
  byOwner: Partial<Record<Owner, number>>;
  /** Breakwater's functions, most allocating first (at most `top`). */
  breakwater: Array<{ name: string; bytesPerCall: number }>;
}

/** Allocation per call in the sampling heap profile rooted at `head`, over `calls` calls (at least 1). */
export function attributeAllocations(
  head: HeapProfileNode,
  calls: number,
  top = 10,
): AllocationAttribution {
  const perCall = 1 / Math.max(1, calls);
  const byOwner: Partial<Record<Owner, number>> = {};
  const ours = new Map<string, number>();
  let total = 0;
  const stack: HeapProfileNode[] = [head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    stack.push(...node.children);
    if (node.selfSize === 0) continue;
    const bytes = node.selfSize * perCall;
    total += bytes;
    const owner = ownerOf(node.callFrame);
    byOwner[owner] = (byOwner[owner] ?? 0) + bytes;
    if (owner === 'breakwater') {
      const name = breakwaterName(node.callFrame);
      ours.set(name, (ours.get(name) ?? 0) + bytes);
    }
  }
  const breakwater = topOf(ours, top).map(([name, bytesPerCall]) => ({ name, bytesPerCall }));
  return { calls, bytesPerCall: total, byOwner, breakwater };
}

/**
 * Samples what this process allocates while `work` runs (every
 * `intervalBytes` on average), counting objects the GC has since collected,
 * and returns the profile's root.
 */
export async function allocationsWhile<T>(
  work: () => Promise<T>,
  intervalBytes = 128,
): Promise<{ result: T; head: HeapProfileNode }> {
  // Without the include flags (newer than @types/node's protocol types), only
  // objects still alive at the end are reported.
  const sampling: object = {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  };
  const { result, stopped } = await inspectWhile(
    work,
    async (session) => {
      await session.post('HeapProfiler.enable');
      await session.post('HeapProfiler.startSampling', sampling);
    },
    (session) => session.post('HeapProfiler.stopSampling'),
  );
  return { result, head: stopped.profile.head as unknown as HeapProfileNode };
}
