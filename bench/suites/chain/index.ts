/**
 * One call chain, one deadline (issue 33): four services A → B → C → D,
 * each in its own process, built three ways — grpc-js `retryPolicy` on
 * every hop, tRPC `retryLink` on every hop, and Breakwater mixing its three
 * adapters with its server bindings — meeting the same leaf failures,
 * counted at the servers.
 */
import { systemSleep } from '@breakwater/core/time';
import {
  type ChainFigures,
  chainFigures,
  HOPS,
  type HopRecord,
  type RootRecord,
} from '../../harness/chain-figures.js';
import { CHAIN_SCENARIOS, chainTargets, deadlineErrorText } from '../../harness/chain-goals.js';
import { type CommandChild, spawnCommandChild } from '../../harness/children.js';
import { fmt, pct, type Suite, type Table } from '../../harness/report.js';
import type { LeafMode } from './hop.js';
import { HOP_TIMEOUT_MS } from './outbound.js';
import { ROOT_DEADLINE_MS, rootCaller } from './root.js';
import { wallNow } from './servers.js';
import type { ServiceSpec } from './service.js';
import { type ChainStack, STACKS } from './stacks.js';

/** Each hop's deadline is its caller's minus this (Breakwater's default `propagate.marginMs`). */
const MARGIN_MS = 5;
/** When the root caller cancels in the explicit-cancel scenario, ms after sending. */
const CANCEL_AFTER_MS = 300;

interface ChainScenario {
  name: string;
  mode: LeafMode;
  cancelAfterMs?: number;
}

const SCENARIOS: ChainScenario[] = [
  { name: CHAIN_SCENARIOS.failAll, mode: 'fail' },
  { name: CHAIN_SCENARIOS.fail30, mode: 'fail30' },
  { name: CHAIN_SCENARIOS.hangDeadline, mode: 'hang' },
  { name: CHAIN_SCENARIOS.hangCancel, mode: 'hang', cancelAfterMs: CANCEL_AFTER_MS },
];

type ServiceChild = CommandChild<{ address: string }>;

/** Starts D, then C calling D, … then A: one child process each. */
async function startChain(stack: ChainStack): Promise<ServiceChild[]> {
  const children: ServiceChild[] = [];
  try {
    let next: string | undefined;
    for (const hop of [...HOPS].reverse()) {
      const { server, client } = stack.hops[hop];
      const spec: ServiceSpec = {
        hop,
        server,
        bound: stack.breakwater,
        ...(client && next ? { client, next } : {}),
      };
      const child = await spawnCommandChild<{ address: string }>('chain-service-child.ts', [
        JSON.stringify(spec),
      ]);
      children.unshift(child);
      next = child.ready.address;
    }
    return children;
  } catch (error) {
    await Promise.all(children.map((c) => c.close()));
    throw error;
  }
}

/** Sends `count` root requests at `rate` per second to A and waits for every answer. */
async function driveRoots(
  stack: ChainStack,
  address: string,
  scenario: ChainScenario,
  rate: number,
  count: number,
): Promise<{ startedAt: number; roots: RootRecord[] }> {
  const caller = rootCaller(stack.hops.A.server, address);
  const startedAt = wallNow();
  const pending: Promise<RootRecord>[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const wait = startedAt + (i * 1000) / rate - wallNow();
      if (wait > 0) await systemSleep(wait);
      pending.push(caller.call(`root-${i}`, scenario.cancelAfterMs));
    }
    return { startedAt, roots: await Promise.all(pending) };
  } finally {
    caller.close();
  }
}

/** How long after the last root request the run waits, at most, for the calls below A to end. */
const SETTLE_MS = HOP_TIMEOUT_MS + 1_000;

/**
 * Waits until no call runs at any service and none arrived for 300 ms, or
 * `SETTLE_MS` passed: whatever still runs then is counted as never stopped.
 */
async function settled(chain: ServiceChild[]): Promise<void> {
  const until = wallNow() + SETTLE_MS;
  let last = -1;
  while (wallNow() < until) {
    const activity = (await Promise.all(chain.map((c) => c.command('activity')))) as {
      received: number;
      running: number;
    }[];
    const received = activity.reduce((n, a) => n + a.received, 0);
    if (received === last && activity.every((a) => a.running === 0)) return;
    last = received;
    await systemSleep(300);
  }
}

async function runScenario(
  stack: ChainStack,
  chain: ServiceChild[],
  scenario: ChainScenario,
  quick: boolean,
): Promise<ChainFigures> {
  const rate = quick ? 10 : 20;
  const seconds = quick ? 3 : 10;
  await Promise.all(chain.map((c) => c.command('reset', { mode: scenario.mode })));
  const A = chain[0] as ServiceChild;
  const { startedAt, roots } = await driveRoots(
    stack,
    A.ready.address,
    scenario,
    rate,
    rate * seconds,
  );
  await settled(chain);
  const records = (await Promise.all(chain.map((c) => c.command('records')))).flat() as HopRecord[];
  return chainFigures(
    {
      scenario: scenario.name,
      stack: stack.name,
      breakwater: stack.breakwater,
      startedAt,
      warmFromMs: (seconds * 1000) / 2,
      marginMs: MARGIN_MS,
    },
    roots,
    records,
  );
}

const COLUMNS = [
  'Scenario',
  'Stack',
  'Root success',
  'Attempts at D per root request (first second / warm)',
  'Late calls at C or D after the root gave up',
  'Cancel propagation p50 / max ms',
  'Deadline error per hop, ms (median / worst)',
];

const msText = (v: number | undefined) =>
  v === undefined ? '–' : Number.isFinite(v) ? fmt(v, 1) : 'never';

function rowOf(f: ChainFigures): string[] {
  return [
    f.scenario,
    f.stack,
    pct(f.rootSuccess),
    `${fmt(f.attemptsAtDFirstSecond, 2)} / ${fmt(f.attemptsAtDWarm, 2)}`,
    String(f.lateCalls),
    f.cancelCalls === 0
      ? '–'
      : `${msText(f.cancelP50Ms)} / ${msText(f.cancelMaxMs)} (${f.cancelCalls} calls)`,
    deadlineErrorText(f),
  ];
}

export const chainSuite: Suite = {
  name: 'chain',
  title:
    'One call chain, one deadline: retries, deadlines and cancellation across four services (issue 33)',
  async run({ quick }) {
    const figures: ChainFigures[] = [];
    for (const stack of STACKS) {
      const chain = await startChain(stack);
      try {
        for (const scenario of SCENARIOS)
          figures.push(await runScenario(stack, chain, scenario, quick));
      } finally {
        await Promise.all(chain.map((c) => c.close()));
      }
    }
    const rate = quick ? 10 : 20;
    const seconds = quick ? 3 : 10;
    const table: Table = {
      title: `A → B → C → D, ${rate} root requests/s for ${seconds} s per scenario, root deadline ${ROOT_DEADLINE_MS} ms`,
      columns: COLUMNS,
      rows: SCENARIOS.flatMap((s) => figures.filter((f) => f.scenario === s.name).map(rowOf)),
    };
    return {
      tables: [table],
      targets: chainTargets(figures),
      notes: [
        `Four services, each its own process, each a server that calls the next with one client; A's caller sends ${rate} root requests/s open loop, one plain call each (no retries) with a ${ROOT_DEADLINE_MS} ms deadline, and in the last scenario cancels each after ${CANCEL_AFTER_MS} ms. Every handler only calls the next hop and forwards the root request id (\`x-root-id\`); D fails every call (UNAVAILABLE / HTTP 503), fails 30% of attempts (drawn per root request and attempt from one seed, so every stack meets the same), or hangs until cancelled. Every hop's client has its own ${HOP_TIMEOUT_MS} ms deadline and 3 attempts; services are reset (fresh clients: empty budgets, closed circuits) before each scenario.`,
        `Counted at the servers, on one machine clock (\`performance.timeOrigin + performance.now()\`): gRPC servers through a grpc-js server interceptor placed before any other (arrival, the deadline grpc-js read from \`grpc-timeout\`, the cancellation grpc-js hands the handler), tRPC servers at the node:http request (arrival, \`x-breakwater-timeout-ms\`, the response closing unfinished, which aborts the procedure's signal). "First second": root requests sent in the first second after a reset; "warm": those sent in the second half of the run. "Late calls": attempts reaching C or D after their root's caller stopped waiting (its answer, its deadline or its cancel). "Cancel propagation": for root requests whose caller gave up, every call at B, C or D still running then, and how long after the give-up it stopped (cancelled or answered); "never": still running ${SETTLE_MS} ms after the last root request ended. "Deadline error": the deadline each hop saw minus (the root's deadline − ${MARGIN_MS} ms per hop above it), median and worst signed value over the scenario's attempts; "none": no deadline reached that hop. Deadlines travel as remaining time (\`grpc-timeout\`, \`x-breakwater-timeout-ms\`), so the time between the client reading its clock and the server reading its own (a new connection, a busy event loop) arrives as a later deadline and adds up hop by hop.`,
        'Peers: grpc-js with a service-config retryPolicy (3 attempts, 50 ms × 2, UNAVAILABLE) and a call deadline on every hop; tRPC retryLink (queries, server errors, 3 attempts) over httpLink with `AbortSignal.timeout` on every hop. Neither passes the inbound call to its outbound one: grpc-js could (`parent` + `propagate`, by hand in every handler), tRPC cannot. Breakwater: the standard stack (resilienceInterceptor, resilienceLink, resilienceMiddleware with `timeoutMs` set to the same own deadline) and the server binding of each adapter.',
      ],
      data: figures,
    };
  },
};
