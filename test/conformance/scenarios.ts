import { getEventListeners } from 'node:events';
import { systemSleep } from '@breakwater/core/time';
import type { RouteSelectionType } from '@breakwater/core/types';
import { expect } from 'vitest';
import type {
  CallOutcome,
  ConformanceOptions,
  EntryPoint,
  Observation,
  OptionRow,
  RowContext,
  Scenario,
} from './types.js';
import { refusedBy } from './verdicts.js';

// Why a row does not apply to an entry point: said once, used wherever it holds.
const NO_METHODS =
  'wraps an arbitrary function: which calls are safe to repeat is the caller’s choice of what to wrap (and its classify); there is no method to mark idempotent';
const NO_HTTP_STATUS =
  'HTTP has no server-sent CANCELLED or DEADLINE_EXCEEDED status; the hung-attempt row covers the attempt timeout for tRPC';
const ONE_TARGET =
  'has one target: failing over needs a second one (the routing entry points run this row)';
const NO_HEDGE =
  'runs its attempts one after another; hedging belongs to the router and the adapters';

const singleTargetOnly = (reason: string): Partial<Record<EntryPoint, string>> => ({
  protect: reason,
  'grpc-js interceptor': reason,
  'nice-grpc middleware': reason,
  'tRPC resilienceLink': reason,
});
const NO_FAILOVER = singleTargetOnly(ONE_TARGET);
const NO_SERVER_STATUS: Partial<Record<EntryPoint, string>> = {
  'tRPC resilienceLink': NO_HTTP_STATUS,
  'tRPC routingLink': NO_HTTP_STATUS,
};
const NO_IDEMPOTENCY: Partial<Record<EntryPoint, string>> = {
  protect: NO_METHODS,
  router: NO_METHODS,
};

// Parts not under test are off, so a row tests one rule (the adapters' standard stack would
// otherwise add its own budget and circuit).
const quiet = { budget: false, circuit: false } as const satisfies ConformanceOptions;
const fixed = (ms: number) => ({ baseDelayMs: ms, jitter: 'none' as const });

// Issue 29: a call not safe to repeat is executed at most once at the server, whatever a
// server or the caller does, on every entry point that can repeat a call. The generic entry
// points (protect, the router) are told which calls are unsafe by their driver's classify.
const TRPC_TEXT =
  'the status text is gRPC’s: a tRPC 503 carries tRPC’s own body, and the HTTP status alone decides (the first text row plays it)';
const NO_SELECTION =
  'has one target, so there is no selection to make (the rows without a `selection` run it)';
const ROUTER_PARALLEL =
  'races and hedges whatever it wraps: a call not safe to repeat is one the caller keeps off a racing or hedging router (no classify can call back an attempt already sent)';

/** Texts a server may put in a trailers-only UNAVAILABLE: grpc-js’s own words included, as a middle tier forwards them. */
const SERVER_TEXTS: ReadonlyArray<readonly [string, string]> = [
  ['econnrefused', 'No connection established. Last error: connect ECONNREFUSED 10.0.0.7:50051'],
  ['lb-words', 'round_robin: No connection established'],
  ['stream-refused', 'Stream refused by server'],
  ['any', 'upstream said no'],
];

const once = { ...quiet, retry: { attempts: 3, backoff: fixed(10) } } as const;
// A failing non-idempotent call with retries on, a second server to fail over to, and time
// for a late retry to show at a server.
const failingUnsafe = {
  secondary: {},
  options: once,
  call: { unsafe: true },
  settleMs: 150,
} as const satisfies Partial<Scenario>;

const serverTextRows: Scenario[] = SERVER_TEXTS.map(([slug, details], i) => ({
  id: `unsafe-once-text-${slug}`,
  title: `a non-idempotent call answered trailers-only UNAVAILABLE "${details}" runs once`,
  primary: { steps: [{ kind: 'fail', status: 'UNAVAILABLE', details }] },
  ...failingUnsafe,
  expect: { caller: 'UNAVAILABLE', attempts: ['UNAVAILABLE'], retryEvents: [] },
  ...(i === 0
    ? {}
    : { notApplicable: { 'tRPC resilienceLink': TRPC_TEXT, 'tRPC routingLink': TRPC_TEXT } }),
}));

const SELECTIONS = [
  undefined,
  'sticky',
  'round-robin',
  'least-latency',
  'power-of-two',
  'race',
] as const satisfies ReadonlyArray<RouteSelectionType | undefined>;

// Racing already runs every target at once: hedging it is refused at construction.
const selectionRows: Scenario[] = SELECTIONS.flatMap((type) =>
  (type === 'race' ? [false] : [false, true]).map((hedged): Scenario => {
    const notApplicable: Partial<Record<EntryPoint, string>> = {
      ...(type === undefined ? {} : singleTargetOnly(NO_SELECTION)),
      ...(hedged || type === 'race' ? { router: ROUTER_PARALLEL } : {}),
      ...(hedged && type === undefined ? { protect: NO_HEDGE } : {}),
    };
    return {
      id: `unsafe-once-${type ?? 'priority'}${hedged ? '-hedged' : ''}`,
      title: `a non-idempotent call runs on one server only: selection ${type ?? 'priority (the default)'}${hedged ? ', hedged' : ''}`,
      primary: { steps: [{ kind: 'ok', delayMs: 300 }] },
      secondary: { steps: [{ kind: 'ok', delayMs: 300 }] },
      options: {
        ...once,
        ...(hedged ? { hedge: { delayMs: 50, attempts: 2 } } : {}),
        ...(type === undefined ? {} : { selection: { type } }),
      },
      call: { unsafe: true },
      settleMs: 150,
      expect: { caller: 'OK', attempts: ['OK'] },
      ...(Object.keys(notApplicable).length === 0 ? {} : { notApplicable }),
    };
  }),
);

/** The rows of issue 29: executed at most once, counted at the server. */
const AT_MOST_ONCE: readonly Scenario[] = [
  ...serverTextRows,
  {
    id: 'unsafe-once-reset',
    title: 'a non-idempotent call whose connection drops after the server took it runs once',
    primary: { steps: [{ kind: 'reset' }] },
    ...failingUnsafe,
    // The tRPC server sees its request end before it answered.
    expect: {
      caller: 'UNAVAILABLE',
      attempts: [{ grpc: 'RESET', trpc: 'CANCELLED' }],
      retryEvents: [],
    },
  },
  {
    id: 'unsafe-once-proxy-502',
    title: 'a non-idempotent call a proxy answered 502 runs once, retries on',
    primary: { steps: [{ kind: 'proxy-502' }] },
    ...failingUnsafe,
    expect: {
      caller: { grpc: 'UNAVAILABLE', trpc: 'BAD_GATEWAY' },
      attempts: [{ grpc: 'UNAVAILABLE', trpc: 'BAD_GATEWAY' }],
      retryEvents: [],
    },
  },
  {
    id: 'unsafe-once-aborted-signal',
    title: 'a non-idempotent call whose signal is already aborted is never sent',
    primary: {},
    secondary: {},
    options: once,
    call: { unsafe: true, abortedBefore: true },
    settleMs: 150,
    expect: { caller: 'CANCELLED', attempts: [] },
  },
  ...selectionRows,
];

/**
 * THE table: every row runs against every entry point in `ENTRY_POINTS`, or says
 * why it does not apply. Server behaviour is scripted per attempt; expectations
 * are what the caller got, what the servers saw (outcome of every attempt, in
 * arrival order, and the gaps between them) and the `onRetry` events.
 */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'retry-until-k',
    title: 'retries until attempt 3 succeeds',
    primary: { steps: [fail('UNAVAILABLE'), fail('UNAVAILABLE')] },
    options: { ...quiet, retry: { attempts: 4, backoff: fixed(10) } },
    expect: {
      caller: 'OK',
      attempts: ['UNAVAILABLE', 'UNAVAILABLE', 'OK'],
      retryEvents: [1, 2],
    },
  },
  {
    id: 'pushback-1s',
    title:
      '(0) pushback 1 s on UNAVAILABLE replaces a 3 s backoff: next attempt ≥ 990 ms later (whole seconds: Retry-After has no fractions)',
    primary: { steps: [fail('UNAVAILABLE', 1_000)] },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(3_000) } },
    expect: {
      caller: 'OK',
      attempts: ['UNAVAILABLE', 'OK'],
      gapsMs: [[990, 2_800]],
      retryEvents: [1],
      retryDelaysMs: [[999, 1_001]],
    },
  },
  {
    id: 'pushback-negative',
    title: '(0) negative pushback on UNAVAILABLE stops the retries',
    primary: { steps: [fail('UNAVAILABLE', -1)] },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(10) } },
    settleMs: 150,
    expect: { caller: 'UNAVAILABLE', attempts: ['UNAVAILABLE'], retryEvents: [] },
  },
  {
    id: 'pushback-non-numeric',
    title: 'non-numeric pushback stops the retries',
    primary: { steps: [fail('UNAVAILABLE', 'soon')] },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(10) } },
    settleMs: 150,
    expect: { caller: 'UNAVAILABLE', attempts: ['UNAVAILABLE'], retryEvents: [] },
  },
  {
    id: 'deadline-skip',
    title: 'a retry that cannot finish before the deadline is skipped: the last error at once',
    primary: { steps: [fail('UNAVAILABLE')] },
    options: { ...quiet, timeoutMs: 1_000, retry: { attempts: 3, backoff: fixed(2_000) } },
    expect: {
      caller: 'UNAVAILABLE',
      attempts: ['UNAVAILABLE'],
      retryEvents: [],
      elapsedMs: [0, 800],
    },
  },
  {
    id: 'budget-outage',
    title:
      'sustained outage: ≤ 0.2 attempts per call once the circuit trips, retries within budget',
    primary: { rest: fail('UNAVAILABLE') },
    options: {
      retry: { attempts: 3, backoff: fixed(1) },
      budget: { ratio: 0.1, minRetriesPerSecond: 0 },
      // A count alone opens it (the calls fail back to back): 5 calls trip it.
      circuit: { failureThreshold: 5, failureSpanMs: 0, openDurationMs: 30_000 },
    },
    calls: 40,
    check: checkSustainedOutage,
  },
  {
    id: 'budget-outage-default-backoff',
    title:
      'sustained outage with the default backoff: the at-once first retry of an UNAVAILABLE adds no attempts (≤ 0.2 per call once the circuit trips)',
    primary: { rest: fail('UNAVAILABLE') },
    options: {
      // The default backoff: each call's first retry goes at once, the next backs off.
      retry: { attempts: 3 },
      budget: { ratio: 0.1, minRetriesPerSecond: 0 },
      circuit: { failureThreshold: 5, failureSpanMs: 0, openDurationMs: 30_000 },
    },
    calls: 40,
    check: checkSustainedOutage,
  },
  {
    id: 'attempt-timeout-server-deadline',
    title: 'server DEADLINE_EXCEEDED under an attempt timeout is retried',
    primary: { steps: [fail('DEADLINE_EXCEEDED')] },
    options: {
      ...quiet,
      timeoutMs: 2_500,
      attemptTimeoutMs: 1_000,
      retry: { attempts: 2, backoff: fixed(10) },
    },
    expect: { caller: 'OK', attempts: ['DEADLINE_EXCEEDED', 'OK'], retryEvents: [1] },
    notApplicable: NO_SERVER_STATUS,
  },
  {
    id: 'attempt-timeout-hang',
    title: 'a hung attempt ends at the attempt timeout (cancelled server-side) and is retried',
    primary: { steps: [{ kind: 'hang' }] },
    options: {
      ...quiet,
      timeoutMs: 2_500,
      attemptTimeoutMs: 250,
      retry: { attempts: 2, backoff: fixed(10) },
    },
    expect: {
      caller: 'OK',
      attempts: ['CANCELLED', 'OK'],
      // The attempt's clock starts before the request reaches the server (connection set-up
      // included), so the server-side gap can be shorter than the timeout; the caller's is not.
      gapsMs: [[100, 1_500]],
      elapsedMs: [240, 2_400],
      retryEvents: [1],
    },
  },
  {
    id: 'server-cancelled',
    title: 'CANCELLED sent by the server is not retried on the same target',
    primary: { steps: [fail('CANCELLED')] },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(10) } },
    settleMs: 150,
    expect: { caller: 'CANCELLED', attempts: ['CANCELLED'], retryEvents: [] },
    notApplicable: NO_SERVER_STATUS,
  },
  {
    id: 'server-cancelled-failover',
    title: 'CANCELLED sent by the server may fail over to another target',
    primary: { steps: [fail('CANCELLED')] },
    secondary: {},
    options: { ...quiet, retry: false },
    expect: { caller: 'OK', servedBy: 'secondary', attempts: ['CANCELLED', 'OK'] },
    notApplicable: { ...NO_FAILOVER, 'tRPC routingLink': NO_HTTP_STATUS },
  },
  {
    id: 'caller-cancelled',
    title: 'CANCELLED by the caller: never retried, never failed over, cancelled server-side',
    primary: { steps: [{ kind: 'hang' }] },
    secondary: {},
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(10) } },
    call: { cancelAfterArrivalMs: 100 },
    settleMs: 250,
    expect: {
      caller: 'CANCELLED',
      attempts: ['CANCELLED'],
      retryEvents: [],
      elapsedMs: [90, 2_000],
    },
  },
  {
    id: 'event-numbering',
    title: 'onRetry names the attempt that failed (1, 2 for three failed attempts)',
    primary: { rest: fail('UNAVAILABLE') },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(10) } },
    expect: {
      caller: 'UNAVAILABLE',
      attempts: ['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
      retryEvents: [1, 2],
      retryDelaysMs: [
        [10, 10],
        [10, 20],
      ],
    },
  },
  {
    id: 'throwing-listener',
    title: 'a throwing onRetry listener never breaks the call',
    primary: { steps: [fail('UNAVAILABLE')] },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(10) } },
    listenerThrows: true,
    expect: { caller: 'OK', attempts: ['UNAVAILABLE', 'OK'], retryEvents: [1] },
  },
  {
    id: 'non-idempotent-not-retried',
    title: 'a non-idempotent call that reached the server is not retried by default',
    primary: { steps: [fail('UNAVAILABLE')] },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(10) } },
    call: { unsafe: true },
    settleMs: 150,
    expect: { caller: 'UNAVAILABLE', attempts: ['UNAVAILABLE'], retryEvents: [] },
    notApplicable: NO_IDEMPOTENCY,
  },
  {
    id: 'never-sent-retried',
    title: 'a non-idempotent call that was never sent (connection refused) is retried',
    primary: { down: true },
    options: { ...quiet, retry: { attempts: 3, backoff: fixed(20) } },
    call: { unsafe: true },
    expect: { caller: 'UNAVAILABLE', attempts: [], retryEvents: [1, 2] },
    notApplicable: NO_IDEMPOTENCY,
  },
  {
    id: 'never-sent-failover',
    title: 'a non-idempotent call that was never sent fails over to the secondary',
    primary: { down: true },
    secondary: {},
    options: { ...quiet, retry: false },
    call: { unsafe: true },
    expect: { caller: 'OK', servedBy: 'secondary', attempts: ['OK'] },
    notApplicable: NO_FAILOVER,
  },
  {
    id: 'sent-mutation-not-rerun',
    title: '(b) a non-idempotent call a proxy answered with 502 is not re-run on the secondary',
    primary: { steps: [{ kind: 'proxy-502' }] },
    secondary: {},
    options: { ...quiet, retry: false },
    call: { unsafe: true },
    settleMs: 150,
    expect: {
      caller: { grpc: 'UNAVAILABLE', trpc: 'BAD_GATEWAY' },
      attempts: [{ grpc: 'UNAVAILABLE', trpc: 'BAD_GATEWAY' }],
    },
    notApplicable: { ...NO_FAILOVER, router: NO_METHODS },
  },
  {
    id: 'die-after-message',
    title:
      '(a) an idempotent unary whose target dies after the response message, before the status, fails over',
    primary: { steps: [{ kind: 'die-after-message' }] },
    secondary: {},
    options: { ...quiet, retry: false },
    expect: { caller: 'OK', servedBy: 'secondary', attempts: ['DIED_AFTER_MESSAGE', 'OK'] },
    notApplicable: {
      ...NO_FAILOVER,
      'tRPC routingLink':
        'a gRPC fault: an HTTP response carries its status before its body, so there is no "after the message, before the status"',
    },
  },
  {
    id: 'hedge-first-wins',
    title: 'hedging: the first answer wins, the slow attempt is cancelled server-side',
    primary: { steps: [{ kind: 'ok', delayMs: 800 }] },
    secondary: {},
    options: { ...quiet, retry: false, hedge: { delayMs: 100, attempts: 2 } },
    expect: {
      caller: 'OK',
      attempts: ['CANCELLED', 'OK'],
      // The hedge delay runs from the first attempt's start, which may reach the server late
      // (connection set-up): the caller's clock shows the delay, the server's gap may not.
      gapsMs: [[0, 600]],
      elapsedMs: [90, 700],
    },
    notApplicable: { protect: NO_HEDGE },
  },
  {
    id: 'hedge-budget',
    title: 'hedging respects the budget: an empty budget sends no hedge',
    primary: { steps: [{ kind: 'ok', delayMs: 800 }] },
    secondary: {},
    options: {
      circuit: false,
      retry: false,
      hedge: { delayMs: 100, attempts: 2 },
      budget: { ratio: 0, minRetriesPerSecond: 0 },
    },
    expect: { caller: 'OK', attempts: ['OK'], elapsedMs: [750, 2_500] },
    notApplicable: { protect: NO_HEDGE },
  },
  ...AT_MOST_ONCE,
  ...partialFailureRows(),
  ...blackHoleRows(),
  ...admissionRows(),
];

/**
 * Bad options, refused the same way by every entry point at construction: the
 * error class and the option path (the router's and the routing channel's
 * per-target retries sit under `protection.`, so the path is matched as a suffix).
 */
export const OPTION_ROWS: readonly OptionRow[] = [
  {
    id: 'attempts-above-10',
    options: { retry: { attempts: 11 } },
    error: RangeError,
    path: /retry\.attempts/,
  },
  {
    id: 'attempts-not-integer',
    options: { retry: { attempts: 2.5 } },
    error: RangeError,
    path: /retry\.attempts/,
  },
  {
    id: 'hedge-negative-delay',
    options: { hedge: { delayMs: -1 } },
    error: RangeError,
    path: /hedge\.delayMs/,
    notApplicable: { protect: NO_HEDGE },
  },
  {
    id: 'hedge-attempts-above-10',
    options: { hedge: { delayMs: 10, attempts: 11 } },
    error: RangeError,
    path: /hedge\.attempts/,
    notApplicable: { protect: NO_HEDGE },
  },
];

/**
 * A sustained UNAVAILABLE outage of 40 calls: every call fails, ≤ 0.2 attempts per call once
 * the circuit has tripped, and 5 calls to trip it plus at most 10% of 40 calls in retries.
 */
function checkSustainedOutage({ outcomes, attempts }: Observation): void {
  expect(outcomes.every((o) => o.code !== 'OK')).toBe(true);
  const perCall = (i: number) => attempts.filter((a) => a.callId === `call-${i}`).length;
  let late = 0;
  for (let i = 11; i <= 40; i++) late += perCall(i);
  expect(late / 30).toBeLessThanOrEqual(0.2);
  expect(attempts.length).toBeLessThanOrEqual(5 + 4 + 1);
}

function fail(
  status: 'UNAVAILABLE' | 'DEADLINE_EXCEEDED' | 'CANCELLED',
  pushback?: number | string,
) {
  return pushback === undefined
    ? ({ kind: 'fail', status } as const)
    : ({ kind: 'fail', status, pushback } as const);
}

/**
 * Issue 30, partial failures: one target dead or slow while another answers. The retry
 * budget protects server load, so what never reached a server costs it nothing, and hedges
 * leave a reserve for the failovers a failed call needs.
 */
function partialFailureRows(): Scenario[] {
  const empty = { ratio: 0, minRetriesPerSecond: 0 };
  const noProof = {
    ...NO_FAILOVER,
    router:
      'wraps a plain grpc-js client, whose error does not say whether response headers came back: its classify cannot prove the call never left (the routing channel, which sees the stream, can; core tests cover the router rule)',
  };
  return [
    {
      id: 'never-sent-no-budget',
      title: 'a never-sent attempt does not draw on the budget: an empty budget still fails over',
      primary: { down: true },
      secondary: {},
      options: { circuit: false, retry: false, budget: empty },
      expect: { caller: 'OK', servedBy: 'secondary', attempts: ['OK'] },
      notApplicable: noProof,
    },
    {
      id: 'failed-probe-fails-over',
      title:
        'a failed probe fails over: a dead primary (its circuit re-opening at each probe) costs no call and no budget',
      primary: { down: true },
      secondary: {},
      options: {
        retry: false,
        budget: empty,
        circuit: { failureThreshold: 1, failureSpanMs: 0, openDurationMs: 1 },
      },
      calls: 4,
      check: ({ outcomes, attempts }) => {
        expect(outcomes.map((o) => o.code)).toEqual(['OK', 'OK', 'OK', 'OK']);
        expect(outcomes.every((o) => o.servedBy === 'secondary')).toBe(true);
        expect(attempts.map((a) => `${a.server}:${a.outcome}`)).toEqual(
          Array(4).fill('secondary:OK'),
        );
      },
      notApplicable: noProof,
    },
    {
      id: 'hedge-reserve',
      title:
        'hedges never take the last of the budget’s reserve: a one-retry budget sends no hedge',
      primary: { steps: [{ kind: 'ok', delayMs: 400 }] },
      secondary: {},
      options: {
        circuit: false,
        retry: false,
        hedge: { delayMs: 100, attempts: 2 },
        budget: { ratio: 0, minRetriesPerSecond: 0.1, ttlMs: 10_000 },
      },
      expect: { caller: 'OK', attempts: ['OK'], elapsedMs: [350, 2_000] },
      notApplicable: { protect: NO_HEDGE },
    },
  ];
}

/**
 * Issue 30, a black hole: a target that takes calls and never answers, after a warm-up that
 * taught the entry point its normal latency. Each hung attempt is backed up on the other target
 * at the derived attempt time (3 × the p99, at least 100 ms), cancelled at the hole when the
 * backup answers and counted for its circuit; two of those in a row open it, and the hole then
 * sees only recovery probes.
 */
function blackHoleRows(): Scenario[] {
  const calls = 30;
  const slow = { rest: { kind: 'ok', delayMs: 400 } } as const;
  // The primary hangs after the warm-up; the secondary answers; the standard circuit (the
  // router has none unless asked).
  const hole = {
    primary: { rest: { kind: 'hang' } },
    secondary: {},
    options: {
      timeoutMs: 1_000,
      retry: false,
      budget: false,
      circuit: {},
      selection: { type: 'round-robin' },
    },
    warmUpCalls: 50,
    calls,
    settleMs: 300,
    notApplicable: NO_FAILOVER,
  } as const satisfies Partial<Scenario>;
  return [
    {
      id: 'unsafe-slow-not-cut',
      title:
        'a non-idempotent call to a slow but answering server (past 3 × its p99, within the deadline) is answered, executed once: a derived attempt timeout never cuts it',
      primary: slow,
      secondary: slow,
      options: { timeoutMs: 2_000, circuit: false, budget: false },
      warmUpCalls: 25,
      call: { unsafe: true },
      settleMs: 150,
      expect: { caller: 'OK', attempts: ['OK'], elapsedMs: [350, 1_500] },
    },
    {
      id: 'black-hole-ejected',
      title:
        'a black-holed target (hang) is ejected and calls fail over within the deadline (round-robin)',
      ...hole,
      check: ({ outcomes, attempts }) => {
        expect(outcomes.map((o) => o.code)).toEqual(Array(calls).fill('OK'));
        expect(Math.max(...outcomes.map((o) => o.elapsedMs))).toBeLessThan(1_000);
        const hole = attempts.filter((a) => a.server === 'primary');
        // Cut, and cancelled at the hole: nothing there waits out the deadline.
        expect(hole.map((a) => a.outcome)).toEqual(hole.map(() => 'CANCELLED'));
        // Round-robin alone sends it every other call (15); ejected, it gets the few calls
        // before its circuit opened (5 counted failures spanning 500 ms) and probes.
        expect(hole.length).toBeLessThanOrEqual(10);
        const late = hole.filter((a) => Number(a.callId.replace('call-', '')) > calls / 2);
        expect(late.length, 'visits to the hole in the second half (probes)').toBeLessThanOrEqual(
          3,
        );
      },
    },
    {
      id: 'black-hole-ejected-fast',
      title:
        'a black-holed target is ejected within 2 × its derived cut + one probe interval (round-robin)',
      ...hole,
      check: ({ outcomes, attempts }) => {
        expect(outcomes.map((o) => o.code)).toEqual(Array(calls).fill('OK'));
        const hole = attempts.filter((a) => a.server === 'primary');
        const first = hole[0]?.receivedAt ?? Number.NaN;
        // Two visits ran past the cut (>= 100 ms each) while the other target answered: out.
        // Without that rule, round-robin gives it every other call: 3 or more in 400 ms.
        const soon = hole.filter((a) => a.receivedAt - first < 2 * 100 + 200);
        expect(
          soon.length,
          'attempts at the hole within 2 cuts + one open duration',
        ).toBeLessThanOrEqual(2);
      },
    },
  ];
}

/**
 * Issue 31, one admission order for every entry point: the deadline starts first, then the
 * circuit, the rate limit and the slot. So a wait for a slot counts against `timeoutMs`, an
 * open circuit or a spent rate limit refuses a call at once (it never waits for a slot or takes
 * one), and a refused call leaves nothing behind. The rows fill a one-slot bulkhead with a
 * call the server holds, and look at what the next call gets and how soon.
 */
function admissionRows(): Scenario[] {
  const NO_RATE_LIMIT =
    'routes over targets without a rate limit of its own: a token bucket is per target, inside its protection';
  const oneSlot = { limit: 1, maxQueue: 1 } as const;
  // The circuit opens on one failure and lets a probe through 300 ms later.
  const quickCircuit = { failureThreshold: 1, failureSpanMs: 0, openDurationMs: 300 } as const;
  const circuitAndSlot = {
    ...quiet,
    retry: false,
    circuit: quickCircuit,
    concurrency: oneSlot,
  } as const satisfies ConformanceOptions;
  const refusedAtOnce = (o: CallOutcome, by: string) => {
    expect(refusedBy(o.error), `refused by ${by}, got ${String(o.error)}`).toBe(by);
    // At once: a call queued behind the holder would wait for its answer (1 s).
    expect(o.elapsedMs, 'refused at once, not after a wait in the queue').toBeLessThan(400);
  };
  /** Opens the circuit with a failure, then lets the holder in as its half-open probe: the circuit refuses every other call while the holder keeps the one slot. */
  const fillWithCircuitOpen = async (
    row: RowContext,
  ): Promise<{ holder: Promise<CallOutcome> }> => {
    row.play({ rest: fail('UNAVAILABLE') });
    const failed = await row.start('opener');
    expect(failed.code, String(failed.error)).not.toBe('OK');
    row.play({ rest: { kind: 'ok', delayMs: 1_000 } });
    // The open duration (300 ms) and a margin.
    await systemSleep(400);
    const holder = row.start('holder');
    await row.arrived('holder');
    // In an object: an async function returning the promise itself would wait for it.
    return { holder };
  };
  return [
    {
      id: 'admit-queue-counts-against-deadline',
      title:
        'a call queued behind a full bulkhead times out at its deadline, not its deadline plus the wait',
      primary: { rest: { kind: 'ok', delayMs: 550 } },
      options: { ...quiet, retry: false, timeoutMs: 800, concurrency: oneSlot },
      choreography: async (row) => {
        const holder = row.start('holder');
        await row.arrived('holder');
        // Queued until the holder's answer (~550 ms), it has ~250 ms left, not a fresh 800 ms:
        // with the wait not counted it would be answered (or cut) ~1.1 s after it started.
        const queued = await row.start('queued');
        expect((await holder).code).toBe('OK');
        expect(queued.code, String(queued.error)).toBe('DEADLINE_EXCEEDED');
        expect(queued.elapsedMs).toBeGreaterThanOrEqual(700);
        expect(queued.elapsedMs).toBeLessThan(1_000);
        expect(row.attempts('queued').map((a) => a.outcome)).not.toContain('OK');
      },
    },
    {
      id: 'admit-open-circuit-takes-no-slot',
      title:
        'with the bulkhead full and the circuit refusing, a call is refused with the circuit error at once: it never takes a queue place',
      primary: {},
      options: { ...circuitAndSlot, timeoutMs: 5_000 },
      choreography: async (row) => {
        const { holder } = await fillWithCircuitOpen(row);
        refusedAtOnce(await row.start('refused'), 'circuit');
        expect((await holder).code).toBe('OK');
        expect(row.attempts('refused')).toEqual([]);
      },
    },
    {
      id: 'admit-rate-limited-takes-no-slot',
      title:
        'with the bulkhead full and the rate limit spent, a call is refused by the rate limit at once, not as a full bulkhead: it never asks for a slot',
      primary: { rest: { kind: 'ok', delayMs: 1_000 } },
      options: {
        ...quiet,
        retry: false,
        timeoutMs: 5_000,
        // No queue: a slot asked for before the token would be refused as a full queue.
        concurrency: { limit: 1, maxQueue: 0 },
        rateLimit: { capacity: 1, refillPerSecond: 0.01 },
      },
      choreography: async (row) => {
        const holder = row.start('holder');
        await row.arrived('holder');
        refusedAtOnce(await row.start('refused'), 'rate-limit');
        expect((await holder).code).toBe('OK');
        expect(row.attempts('refused')).toEqual([]);
      },
      notApplicable: {
        router: NO_RATE_LIMIT,
        'grpc-js routing channel': NO_RATE_LIMIT,
        'tRPC routingLink': NO_RATE_LIMIT,
      },
    },
    {
      id: 'admit-refused-leaves-nothing',
      title:
        'calls the circuit refuses leave nothing behind: no slot or queue place, no deadline timer, no listener on their signal',
      primary: {},
      // No queue: a slot asked for before the circuit would be refused as a full queue.
      options: { ...circuitAndSlot, concurrency: { limit: 1, maxQueue: 0 }, timeoutMs: 30_000 },
      choreography: async (row) => {
        const { holder } = await fillWithCircuitOpen(row);
        const timers = () =>
          process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
        const before = timers();
        const signals = Array.from({ length: 20 }, () => new AbortController().signal);
        for (const [i, signal] of signals.entries()) {
          refusedAtOnce(await row.start(`refused-${i}`, { signal }), 'circuit');
        }
        // A 30 s deadline timer each refused call left armed would show here 20 times over.
        expect(timers() - before, 'timers left armed by refused calls').toBeLessThan(10);
        for (const signal of signals) expect(getEventListeners(signal, 'abort')).toEqual([]);
        expect((await holder).code).toBe('OK');
        // The probe closed the circuit and gave the one slot back: no refused call kept it.
        const after = await row.start('after');
        expect(after.code, String(after.error)).toBe('OK');
        expect(row.attempts().filter((a) => a.callId.startsWith('refused'))).toEqual([]);
      },
    },
  ];
}
