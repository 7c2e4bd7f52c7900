import type { ChaosTarget, ScenarioPhase } from '@breakwater/chaos';

/** The servers a scenario acts on: replica `a`, `b`, `c` of each protocol (tRPC has `a` and `b`). */
export interface DemoTargets {
  grpc: { a: ChaosTarget; b: ChaosTarget; c: ChaosTarget };
  trpc: { a: ChaosTarget; b: ChaosTarget };
}

type Builder = (t: DemoTargets, totalMs: number) => ScenarioPhase[];

/** Splits `totalMs` by `weights` (the last phase absorbs rounding). */
function split(totalMs: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const parts = weights.map((w) => Math.round((totalMs * w) / sum));
  parts[parts.length - 1] = totalMs - parts.slice(0, -1).reduce((a, b) => a + b, 0);
  return parts;
}

const both = (...actions: Array<Promise<void>>) => Promise.all(actions).then(() => undefined);
const longTail = { kind: 'tail', percent: 5, extraMs: 300 } as const;

/**
 * healthy → replica A fails 30% with UNAVAILABLE/503 → A is killed (SIGKILL /
 * listener closed) → B grows a long tail (5% of calls +300 ms) while A is
 * still down → A restarts and B heals.
 */
const defaultScenario: Builder = (t, totalMs) => {
  // A restart spawns a process (about 1–2 s through tsx), so the last phase never gets less than 3.5 s.
  const back = Math.max(Math.round((totalMs * 8) / 30), 3_500);
  const [healthy, flaky, killed, tail] = split(totalMs - back, [4, 6, 6, 6]) as [
    number,
    number,
    number,
    number,
  ];
  return [
    { name: 'healthy', durationMs: healthy },
    {
      name: 'A 30% errors',
      kind: 'fault',
      durationMs: flaky,
      enter: () =>
        both(t.grpc.a.setFault({ errorRate: 0.3 }), t.trpc.a.setFault({ errorRate: 0.3 })),
    },
    {
      name: 'A killed',
      kind: 'outage',
      durationMs: killed,
      enter: () => both(t.grpc.a.kill(), t.trpc.a.kill()),
    },
    {
      name: 'B long tail',
      kind: 'fault',
      durationMs: tail,
      enter: () =>
        both(t.grpc.b.setFault({ latency: longTail }), t.trpc.b.setFault({ latency: longTail })),
    },
    {
      name: 'A restarted',
      kind: 'recovery',
      durationMs: back,
      restores: [t.grpc.a.id, t.trpc.a.id],
      // However long the restart takes, watch the return for most of the phase.
      holdMs: Math.min(back - 500, 5_000),
      enter: async () => {
        await both(t.grpc.a.setFault(undefined), t.trpc.a.setFault(undefined));
        await both(t.grpc.b.setFault(undefined), t.trpc.b.setFault(undefined));
        await both(t.grpc.a.restart(), t.trpc.a.restart());
      },
    },
  ];
};

/**
 * Every replica answers UNAVAILABLE/503 for a while: shows retry amplification
 * and load shedding. As in a real outage, the gRPC replicas' health services
 * say NOT_SERVING while they fail and SERVING once healed (pushed to
 * `Health/Watch` streams); tRPC has no standard health service.
 */
const outageScenario: Builder = (t, totalMs) => {
  const [healthy, down, back] = split(totalMs, [1, 2, 1]) as [number, number, number];
  const all = [t.grpc.a, t.grpc.b, t.grpc.c, t.trpc.a, t.trpc.b];
  return [
    { name: 'healthy', durationMs: healthy },
    {
      name: 'all replicas failing',
      kind: 'outage',
      durationMs: down,
      enter: () => both(...all.map((x) => x.setFault({ errorRate: 1, notServing: true }))),
    },
    {
      name: 'recovered',
      kind: 'recovery',
      durationMs: back,
      enter: () => both(...all.map((x) => x.setFault(undefined))),
    },
  ];
};

/**
 * The slow replica's latency in the `tail` scenario: 5% of its calls take
 * 400 ms more. Breakwater's lanes hedge after a fixed 150 ms: a percentile
 * delay (p95) followed the machine's own stalls on a loaded CI host and fired
 * only when the slow answer was already due.
 */
export const TAIL_LATENCY = { kind: 'tail', percent: 5, extraMs: 400 } as const;

/** One replica of each protocol grows a long tail: shows hedging. */
const tailScenario: Builder = (t, totalMs) => {
  const [healthy, slow] = split(totalMs, [1, 3]) as [number, number];
  const tail = TAIL_LATENCY;
  return [
    { name: 'healthy', durationMs: healthy },
    {
      name: `B long tail (${TAIL_LATENCY.percent}% +${TAIL_LATENCY.extraMs} ms)`,
      kind: 'fault',
      durationMs: slow,
      enter: () => both(t.grpc.b.setFault({ latency: tail }), t.trpc.b.setFault({ latency: tail })),
    },
  ];
};

/**
 * Replica A's capacity in the `overload` scenario: one worker, 100 ms a call
 * (10 calls/s), an unbounded queue, no cancellation checks. Round-robin gives A
 * a third of the plain gRPC clients' load (about 8 calls/s each at the default
 * rate; the Breakwater lanes send it what their load-aware routing chooses), so
 * its queue grows within a second or two until every call it takes misses the
 * 1 s deadline, while it keeps serving calls nobody waits for.
 */
export const SATURATED = { workers: 1, serviceMs: 100 } as const;

/** gRPC replica A saturates, then gets its capacity back (tRPC has no capacity fault). */
const overloadScenario: Builder = (t, totalMs) => {
  const [healthy, saturated, back] = split(totalMs, [1, 3, 1]) as [number, number, number];
  return [
    { name: 'healthy', durationMs: healthy },
    {
      name: `A saturated (${1000 / SATURATED.serviceMs} calls/s)`,
      kind: 'fault',
      durationMs: saturated,
      enter: () => t.grpc.a.setFault({ capacity: SATURATED }),
    },
    {
      name: 'A capacity back',
      kind: 'recovery',
      durationMs: back,
      enter: () => t.grpc.a.setFault(undefined),
    },
  ];
};

/** The timelines `--scenario` can pick. */
export const SCENARIOS = {
  default: defaultScenario,
  outage: outageScenario,
  tail: tailScenario,
  overload: overloadScenario,
} satisfies Record<string, Builder>;

/** Name of a built-in scenario. */
export type ScenarioName = keyof typeof SCENARIOS;
