/**
 * What the `chain` suite (issue 33) reads from its servers' records: per
 * root request, how many attempts reached D, which calls reached C or D after
 * the root's caller had stopped waiting, how long the calls still running
 * below A took to stop after it gave up, and how far each hop's deadline was
 * from the root's minus the margin. Pure, so it is unit-tested.
 */
import { percentile, sortedAscending as sorted } from '@breakwater/chaos';

/** The four services of the chain, in call order. */
export const HOPS = ['A', 'B', 'C', 'D'] as const;
export type Hop = (typeof HOPS)[number];

/** What one server saw of one attempt it received (times are epoch ms, one machine clock). */
export interface HopRecord {
  hop: Hop;
  /** The root request the attempt belongs to (propagated by every hop). */
  rootId: string;
  arrivedAt: number;
  /** The deadline the server read off the wire, `undefined` when none came. */
  deadline: number | undefined;
  /** When the call was cancelled (its handler's signal aborted) before it answered. */
  abortedAt: number | undefined;
  /** When the server answered, `undefined` if it never did. */
  endedAt: number | undefined;
}

/** One request of A's caller, as the caller saw it. */
export interface RootRecord {
  rootId: string;
  sentAt: number;
  /** The deadline the caller gave A (epoch ms). */
  deadline: number;
  /** When the caller stopped waiting: its answer, or the moment it gave up. */
  stoppedAt: number;
  ok: boolean;
  /** The caller gave up (deadline or explicit cancel) rather than getting an answer. */
  gaveUp: boolean;
}

/** Deadline error at one hop (seen − (root deadline − hops above × margin)), over its attempts. */
export interface DeadlineError {
  /** The median signed error, ms; `undefined` when no deadline came. */
  medianMs: number | undefined;
  /** The signed error of largest size, ms. */
  worstMs: number | undefined;
  /** Attempts at this hop that carried no deadline. */
  missing: number;
}

/** One stack's figures in one scenario. */
export interface ChainFigures {
  scenario: string;
  stack: string;
  /** A Breakwater chain (the goals apply to it); otherwise a peer. */
  breakwater: boolean;
  roots: number;
  rootSuccess: number | undefined;
  /** Mean attempts at D per root request sent in the first second. */
  attemptsAtDFirstSecond: number | undefined;
  /** The same for root requests sent once budgets are warm (from `warmFromMs`). */
  attemptsAtDWarm: number | undefined;
  /** The same over every root request. */
  attemptsAtDAll: number | undefined;
  /** Attempts that reached C or D after their root's caller had stopped waiting. */
  lateCalls: number;
  /** Calls below A still running when their root gave up. */
  cancelCalls: number;
  /** Ms from the give-up until they stopped: median and max (Infinity: one never stopped). */
  cancelP50Ms: number | undefined;
  cancelMaxMs: number | undefined;
  deadlineError: Record<Hop, DeadlineError>;
}

/** How one stack's run is read. */
export interface RunShape {
  scenario: string;
  stack: string;
  breakwater: boolean;
  /** When the first root request was sent (epoch ms). */
  startedAt: number;
  /** Root requests sent this long after the start or later count as warm. */
  warmFromMs: number;
  /** Each hop's deadline should be its caller's minus this. */
  marginMs: number;
}

/** When the root's caller stopped waiting: its answer or give-up, never after its deadline. */
export const stoppedWaiting = (root: RootRecord) => Math.min(root.stoppedAt, root.deadline);

const mean = (values: readonly number[]) =>
  values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;

const stopOf = (r: HopRecord) => Math.min(r.abortedAt ?? Infinity, r.endedAt ?? Infinity);

function deadlineErrors(
  roots: ReadonlyMap<string, RootRecord>,
  records: readonly HopRecord[],
  marginMs: number,
): Record<Hop, DeadlineError> {
  const out = {} as Record<Hop, DeadlineError>;
  HOPS.forEach((hop, depth) => {
    const errors: number[] = [];
    let missing = 0;
    for (const r of records) {
      const root = roots.get(r.rootId);
      if (r.hop !== hop || !root) continue;
      if (r.deadline === undefined) missing++;
      else errors.push(r.deadline - (root.deadline - depth * marginMs));
    }
    const worstMs = errors.reduce<number | undefined>(
      (worst, e) => (worst === undefined || Math.abs(e) > Math.abs(worst) ? e : worst),
      undefined,
    );
    out[hop] = { medianMs: percentile(sorted(errors), 50), worstMs, missing };
  });
  return out;
}

/** The figures of one stack's run from what its caller and its four servers recorded. */
export function chainFigures(
  shape: RunShape,
  rootList: readonly RootRecord[],
  records: readonly HopRecord[],
): ChainFigures {
  const roots = new Map(rootList.map((r) => [r.rootId, r]));
  const atD = new Map<string, number>();
  for (const r of records) if (r.hop === 'D') atD.set(r.rootId, (atD.get(r.rootId) ?? 0) + 1);
  const attemptsAtD = (from: number, to: number) =>
    mean(
      rootList
        .filter((r) => r.sentAt - shape.startedAt >= from && r.sentAt - shape.startedAt < to)
        .map((r) => atD.get(r.rootId) ?? 0),
    );
  let lateCalls = 0;
  const cancel: number[] = [];
  for (const r of records) {
    const root = roots.get(r.rootId);
    if (!root || r.hop === 'A') continue;
    const gaveUpAt = stoppedWaiting(root);
    if ((r.hop === 'C' || r.hop === 'D') && r.arrivedAt > gaveUpAt) lateCalls++;
    if (root.gaveUp && stopOf(r) > gaveUpAt) cancel.push(stopOf(r) - gaveUpAt);
  }
  cancel.sort((a, b) => a - b);
  return {
    scenario: shape.scenario,
    stack: shape.stack,
    breakwater: shape.breakwater,
    roots: rootList.length,
    rootSuccess:
      rootList.length === 0 ? undefined : rootList.filter((r) => r.ok).length / rootList.length,
    attemptsAtDFirstSecond: attemptsAtD(0, 1_000),
    attemptsAtDWarm: attemptsAtD(shape.warmFromMs, Infinity),
    attemptsAtDAll: attemptsAtD(-Infinity, Infinity),
    lateCalls,
    cancelCalls: cancel.length,
    cancelP50Ms: percentile(cancel, 50),
    cancelMaxMs: cancel.at(-1),
    deadlineError: deadlineErrors(roots, records, shape.marginMs),
  };
}
