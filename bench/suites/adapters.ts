/**
 * Adapter overhead: unary/query throughput and p99 of the same client bare and
 * with the full Breakwater stack, against a server in another process, at
 * concurrency 1 and 64, in interleaved rounds. Two controls run in the same
 * rounds: a second bare client (the A/A noise floor) and, for the gRPC
 * adapters, a bare client sending the stack's 10 s deadline.
 */
import { spawnGrpcChaosServer } from '@breakwater/chaos';
import { spawnTrpcServer } from '../harness/children.js';
import { compareClosedLoop, type VariantRounds } from '../harness/closed-loop.js';
import { fmt, fx, pct, type Suite, type Table, type TargetResult } from '../harness/report.js';
import { pairedRatios, type Spread, spread } from '../harness/stats.js';
import {
  breakwaterGrpcLane,
  breakwaterGrpcOptions,
  breakwaterNiceLane,
  breakwaterNiceOptions,
  breakwaterTrpcLinks,
  grpcLane,
  type Lane,
  niceBareLane,
  trpcLane,
  trpcTerminal,
} from './clients.js';

// The full stack adds what the fault runs leave out: a bulkhead and a rate limit that never refuse.
const bulkhead = { concurrency: 10_000 };
const rateLimit = { capacity: 1e9, refillPerSecond: 1e9 };
/** The deadline every gRPC stack sets on each call, also sent by the "bare + deadline" lanes. */
const DEADLINE_MS = 10_000;

/**
 * The lanes of one round, in the order of its first round: the headline pair,
 * then the controls. `bareAgain` is a second, identical bare client (A/A);
 * `stackNoDeadline` is the stack without its deadline part.
 */
type Variant = 'bare' | 'stack' | 'bareDeadline' | 'stackNoDeadline' | 'bareAgain';

interface Subject {
  adapter: string;
  bare: () => Lane;
  stack: () => Lane;
  /** The bare client sending the stack's deadline; only where the stack sends one. */
  bareDeadline?: () => Lane;
  /** The same stack without its deadline part; only where the stack sends one. */
  stackNoDeadline?: () => Lane;
  stackDescription: string;
}

interface Measured {
  adapter: string;
  concurrency: number;
  /** Per-round figures of every variant that ran. */
  rounds: Partial<Record<Variant, VariantRounds>>;
}

/** The one request every lane sends (the chaos servers count attempts by call id). */
const CALL = { callId: 'bench', index: 0 };

async function measure(
  subject: Subject,
  concurrency: number,
  rounds: number,
  roundMs: number,
): Promise<Measured> {
  const factories: Record<Variant, (() => Lane) | undefined> = {
    bare: subject.bare,
    stack: subject.stack,
    bareDeadline: subject.bareDeadline,
    stackNoDeadline: subject.stackNoDeadline,
    bareAgain: subject.bare,
  };
  const lanes = new Map<string, Lane>();
  try {
    for (const [name, make] of Object.entries(factories)) if (make) lanes.set(name, make());
    const calls = Object.fromEntries(
      [...lanes].map(([name, lane]) => [name, () => lane.call(CALL)]),
    );
    const measured = await compareClosedLoop(calls, { concurrency, rounds, roundMs });
    return { adapter: subject.adapter, concurrency, rounds: measured };
  } finally {
    for (const lane of lanes.values()) lane.close();
  }
}

/** Spread of the per-round ratios `of / over` of `figure`; undefined when either did not run. */
function paired(
  r: Measured,
  of: Variant,
  over: Variant,
  figure: keyof VariantRounds = 'throughput',
): Spread | undefined {
  const a = r.rounds[of];
  const b = r.rounds[over];
  return a && b ? spread(pairedRatios(a[figure], b[figure])) : undefined;
}

const ratioCell = (s: Spread | undefined) =>
  s ? `${pct(s.median)} [${pct(s.min)}–${pct(s.max)}]` : '–';

function rateCell(series: number[] | undefined): string {
  if (!series) return '–';
  const s = spread(series);
  return `${fmt(s.median, 0)} (${fmt(s.min, 0)}–${fmt(s.max, 0)})`;
}

const p99Cell = (r: Measured, v: Variant) => fmt(spread(r.rounds[v]?.p99 ?? []).median, 2);

/** Headline target: full stack vs bare without a deadline, judged on the median of paired rounds. */
function headlineTarget(adapter: string, mine: Measured[]): TargetResult {
  const name = `${adapter} adapter ≥ 97% of bare throughput`;
  if (mine.length === 0) {
    return { target: name, figure: '–', met: null, note: 'not measured: see the adapter table' };
  }
  const medians = mine.map((r) => paired(r, 'stack', 'bare')?.median ?? Number.NaN);
  const worst = Math.min(...medians);
  const noise = mine
    .map((r) => `c=${r.concurrency} ${ratioCell(paired(r, 'bareAgain', 'bare'))}`)
    .join(', ');
  return {
    target: name,
    figure: mine.map((r, i) => `c=${r.concurrency}: ${pct(medians[i])}`).join(', '),
    met: worst >= 0.97,
    note: [
      ...(worst >= 0.97
        ? []
        : [`short by ${((0.97 - worst) * 100).toFixed(1)} points at the worst concurrency`]),
      `noise floor (bare / bare A/A): ${noise}`,
    ].join('; '),
  };
}

export const adaptersSuite: Suite = {
  name: 'adapters',
  title: 'Adapter overhead: throughput and p99, bare vs full stack',
  async run({ quick }) {
    const rounds = quick ? 4 : 16;
    const roundMs = quick ? 250 : 500;
    const grpcServer = await spawnGrpcChaosServer({ replica: 'bench', startTimeoutMs: 30_000 });
    const trpcServer = await spawnTrpcServer();
    const target = grpcServer.address;
    const subjects: Subject[] = [
      {
        adapter: 'grpc-js',
        bare: () => grpcLane('bare', target),
        stack: () =>
          breakwaterGrpcLane('stack', target, breakwaterGrpcOptions({ bulkhead, rateLimit })),
        bareDeadline: () => grpcLane('bare + deadline', target, {}, DEADLINE_MS),
        stackNoDeadline: () =>
          breakwaterGrpcLane(
            'stack, no deadline',
            target,
            breakwaterGrpcOptions({ bulkhead, rateLimit, deadline: false }),
          ),
        stackDescription:
          'resilienceInterceptor: deadline 10 s, circuit breaker, rate limit, bulkhead, retry (3 attempts, budget)',
      },
      {
        adapter: 'nice-grpc',
        bare: () => niceBareLane('bare', target),
        stack: () =>
          breakwaterNiceLane('stack', target, { ...breakwaterNiceOptions(), bulkhead, rateLimit }),
        bareDeadline: () => niceBareLane('bare + deadline', target, DEADLINE_MS),
        stackNoDeadline: () =>
          breakwaterNiceLane('stack, no deadline', target, {
            ...breakwaterNiceOptions(),
            bulkhead,
            rateLimit,
            deadline: false,
          }),
        stackDescription:
          'resilienceMiddleware: deadline 10 s, circuit breaker, rate limit, bulkhead, retry (3 attempts, budget)',
      },
      {
        adapter: 'tRPC (httpBatchLink)',
        bare: () => trpcLane('bare', [trpcTerminal(trpcServer.url)]),
        stack: () =>
          trpcLane(
            'stack',
            breakwaterTrpcLinks(trpcTerminal(trpcServer.url), {
              bulkhead: { pool: { concurrency: bulkhead.concurrency } },
              rateLimit: { bucket: rateLimit },
            }),
          ),
        stackDescription:
          'resilienceLink: bulkhead, rate limit, timeout 10 s, retry (3 attempts, budget), circuit breaker',
      },
    ];
    const results: Measured[] = [];
    const skipped: string[] = [];
    try {
      for (const subject of subjects) {
        for (const concurrency of [1, 64]) {
          const label = `${subject.adapter} c=${concurrency}`;
          try {
            const r = await measure(subject, concurrency, rounds, roundMs);
            results.push(r);
            const vsDeadline = paired(r, 'stack', 'bareDeadline');
            const noDeadline = paired(r, 'stackNoDeadline', 'bare');
            console.log(
              `  ${label}: stack/bare ${pct(paired(r, 'stack', 'bare')?.median)} · A/A bare/bare ${ratioCell(paired(r, 'bareAgain', 'bare'))}${vsDeadline ? ` · stack/(bare + deadline) ${pct(vsDeadline.median)}` : ''}${noDeadline ? ` · (stack, no deadline)/bare ${pct(noDeadline.median)}` : ''}`,
            );
          } catch (error) {
            skipped.push(`${label}: ${(error as Error).message}`);
            console.log(`  ${label}: not measured (${(error as Error).message})`);
          }
        }
      }
    } finally {
      await grpcServer.close();
      await trpcServer.close();
    }

    const headline: Table = {
      title:
        'Throughput (calls/s) and p99 latency (ms), bare client vs the same client with the full stack, with the A/A noise floor',
      columns: [
        'Adapter',
        'Concurrency',
        'Bare calls/s median (min–max)',
        'Stack calls/s median (min–max)',
        'Stack / bare (median [min–max] of rounds)',
        'Bare / bare, A/A noise floor (median [min–max])',
        'Bare p99 ms',
        'Stack p99 ms',
        'p99 stack / bare',
      ],
      rows: results.map((r) => [
        r.adapter,
        String(r.concurrency),
        rateCell(r.rounds.bare?.throughput),
        rateCell(r.rounds.stack?.throughput),
        ratioCell(paired(r, 'stack', 'bare')),
        ratioCell(paired(r, 'bareAgain', 'bare')),
        p99Cell(r, 'bare'),
        p99Cell(r, 'stack'),
        fx(paired(r, 'stack', 'bare', 'p99')?.median),
      ]),
      ...(skipped.length ? { notes: skipped.map((s) => `not measured: ${s}`) } : {}),
    };
    const deadline: Table = {
      title: `Cost of sending a deadline at all: bare client with the stack's ${DEADLINE_MS / 1000} s deadline (informative, not a target)`,
      columns: [
        'Adapter',
        'Concurrency',
        'Bare + deadline calls/s median (min–max)',
        'Bare + deadline / bare (median [min–max])',
        'Stack / bare + deadline (median [min–max])',
        'Stack without its deadline / bare (median [min–max])',
      ],
      rows: results
        .filter((r) => r.rounds.bareDeadline)
        .map((r) => [
          r.adapter,
          String(r.concurrency),
          rateCell(r.rounds.bareDeadline?.throughput),
          ratioCell(paired(r, 'bareDeadline', 'bare')),
          ratioCell(paired(r, 'stack', 'bareDeadline')),
          ratioCell(paired(r, 'stackNoDeadline', 'bare')),
        ]),
    };
    return {
      tables: [headline, deadline],
      targets: subjects.map((s) =>
        headlineTarget(
          s.adapter,
          results.filter((r) => r.adapter === s.adapter),
        ),
      ),
      notes: [
        `Closed loop: at concurrency c, c workers each start the next call when the previous one settles. Each variant gets a 300 ms warm-up, then ${rounds} rounds of ${roundMs} ms; a round runs every variant once, back to back, the order rotating by one each round (A B C D, B C D A, …). Servers run in child processes (the chaos gRPC Echo server and the chaos tRPC server, no faults) on 127.0.0.1, so the client process measures only the client. Ratios are per-round throughput ratios (median and min–max over rounds); p99 is the median over rounds of each round's nearest-rank p99.`,
        `Four comparisons share those rounds. "Stack / bare" is the headline the ≥ 97% targets are judged on: the full stack against the same client sending no deadline. "Bare / bare (A/A)" pits two identical, separately created bare clients against each other, so its spread is the noise floor: a stack / bare figure inside it cannot be told apart from no overhead. "Stack / bare + deadline" (gRPC adapters, informative) compares the stack with a bare client sending the same ${DEADLINE_MS / 1000} s deadline, separating Breakwater's client work from what sending any deadline costs (the grpc-js server arms a timer for every call carrying grpc-timeout); "stack without its deadline / bare" runs the same stack minus its deadline part.`,
        `At c=64 the closed loop runs in lockstep waves (the 64 calls complete together), so throughput ≈ 64 / (client time + server time per wave): work the server does per call lowers it as much as client work does.`,
        `nice-grpc turns a deadline call option into a header only through a deadline middleware, so its bare + deadline client sends grpc-timeout: ${DEADLINE_MS}m as metadata on every call (the server arms the same timer; that client does not enforce the deadline itself).`,
        ...subjects.map(
          (s) =>
            `${s.adapter} stack: ${s.stackDescription}; bulkhead ${bulkhead.concurrency} slots and a rate limit that never refuse.`,
        ),
      ],
      data: results,
    };
  },
};
