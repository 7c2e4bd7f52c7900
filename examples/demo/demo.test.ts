import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScenarioReport } from '@breakwater/chaos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDemoArgs } from './src/args.js';
import { computeFindings, GOALS_HEADING } from './src/findings.js';
import { LANE_DESCRIPTIONS } from './src/lane-descriptions.js';
import { runDemo } from './src/main.js';
import { TAIL_LATENCY } from './src/scenarios.js';
import { measurePage } from './src/screenshots.js';
import type { TableRow } from './src/table.js';

/** The lane `--scenario overload` adds; the other scenarios run without it. */
const ADAPTIVE_ONLY = 'grpc/breakwater-adaptive';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `pnpm demo --quick` as a user does (through scripts/demo.mjs, stdout not a terminal). */
function runCli(args: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'demo.mjs'), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout }));
  });
}

describe('pnpm demo --quick', () => {
  let dir = '';
  let out = '';
  let stdout = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'breakwater-demo-'));
    out = join(dir, 'demo-report.html');
    const run = await runCli(['--quick', '--out', out, '--json']);
    stdout = run.stdout;
    expect(run.code, stdout).toBe(0);
  }, 180_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a report with the chart data; Breakwater beats no resilience in the fault phases without amplifying', async () => {
    const html = await readFile(out, 'utf8');
    const json = /<script type="application\/json" id="demo-data">(.*?)<\/script>/s.exec(html)?.[1];
    expect(json).toBeDefined();
    const data = JSON.parse(json as string) as { report: ScenarioReport; table: TableRow[] };
    expect(data.table).toHaveLength(7);
    expect(html.match(/<svg /g)?.length).toBeGreaterThanOrEqual(10);
    const byName = new Map(data.report.clients.map((c) => [c.client, c]));
    for (const protocol of ['grpc', 'trpc']) {
      const none = byName.get(`${protocol}/none`);
      const breakwater = byName.get(`${protocol}/breakwater`);
      expect(breakwater?.seconds.length).toBeGreaterThanOrEqual(8);
      expect(breakwater?.seconds.some((s) => Object.keys(s.load).length > 0)).toBe(true);
      expect(breakwater?.faultSuccessRate, protocol).toBeGreaterThan(none?.faultSuccessRate ?? 1);
      expect(breakwater?.outageAttemptsPerCall, protocol).toBeLessThanOrEqual(1.3);
    }
    const lanes = [
      'grpc/none',
      'grpc/usual',
      'grpc/hedging',
      'grpc/breakwater',
      'trpc/none',
      'trpc/usual',
      'trpc/breakwater',
    ];
    expect(data.table.map((r) => r.client)).toEqual(lanes);
    // Every lane is described, in the terminal and in the report (the adaptive lane runs in
    // --scenario overload only).
    expect(Object.keys(LANE_DESCRIPTIONS).filter((l) => l !== ADAPTIVE_ONLY)).toEqual(lanes);
    for (const lane of lanes) expect(html).toContain(`<dt>${lane}</dt>`);
  });

  it('prints at most 80 columns: the clients, the table in aligned blocks, the findings', () => {
    const lines = stdout.replace(/\n$/, '').split('\n');
    const long = lines.filter((l) => l.length > 80);
    expect(long, stdout).toEqual([]);
    expect(stdout).toContain('attempts/call (outage)');
    expect(stdout).toContain(GOALS_HEADING);
    // One verdict line per protocol: "met every goal" or "missed N goals", each loss in at most two lines.
    for (const protocol of ['grpc', 'trpc']) {
      expect(stdout).toMatch(
        new RegExp(`^${protocol}:  Breakwater (met every goal|missed \\d+ goals?)`, 'm'),
      );
    }
    for (const lane of Object.keys(LANE_DESCRIPTIONS).filter((l) => l !== ADAPTIVE_ONLY)) {
      expect(lines.some((l) => l.startsWith(`${lane} `))).toBe(true);
    }
  });

  it('the report fits a 375 px screen: nothing overflows horizontally (headless Chromium)', async () => {
    const m = await measurePage(out, 375);
    expect(m.innerWidth).toBe(375);
    expect(m.overflowing).toEqual([]);
    expect(m.scrollWidth).toBeLessThanOrEqual(375);
  }, 60_000);
});

/**
 * Breakwater's attempts per call over the quick run's whole outage phase: measured
 * 0.28-0.81 on a loaded machine (0.6-0.9 before the router's outage gate). The
 * calls that open the circuits (with failovers and hedges) dominate its 4 s, and
 * how long that takes depends on the machine's load: kept at fewer than one.
 */
const BREAKWATER_OUTAGE_MAX = 1;
/** The same over the second half of the outage, every circuit open: measured 0.03-0.2 (design at most 0.25). */
const BREAKWATER_OPEN_MAX = 0.4;
/** Calls per second per client in a quick run. */
const QUICK_RATE = 20;
/** Beyond one call interval, how much later than the slowest plain client Breakwater may first succeed after the outage: the calls' own latency on a loaded machine. */
const RECOVERY_MARGIN_MS = 25;
/** How long after the servers healed a pushed SERVING may take to reach the client on a loaded machine. */
const PUSH_MS = 20;

// The other two scenarios, end to end: each asserts the behaviour it exists to show.
describe('pnpm demo --scenario', () => {
  async function quickRun(scenario: string, ...extra: string[]) {
    const dir = await mkdtemp(join(tmpdir(), `breakwater-demo-${scenario}-`));
    try {
      const options = parseDemoArgs(
        [
          '--quick',
          '--scenario',
          scenario,
          '--no-progress',
          '--out',
          join(dir, 'r.html'),
          ...extra,
        ],
        false,
      );
      if (options === 'help') throw new Error('unexpected help');
      return await runDemo(options, () => {});
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The calls of one client that started in the run's fault phase. */
  function faultPhaseCalls(
    report: Awaited<ReturnType<typeof runDemo>>['report'],
    calls: Awaited<ReturnType<typeof runDemo>>['calls'],
  ) {
    const phase = report.phases.find((p) => p.kind === 'fault');
    if (!phase) throw new Error('the scenario has a fault phase');
    const from = report.startedAt + phase.startMs;
    const to = report.startedAt + phase.endMs;
    return (client: string) =>
      calls.filter((c) => c.client === client && c.startedAt >= from && c.startedAt < to);
  }

  it('--scenario outage: Breakwater sheds load while every replica fails; the usual retries amplify it', async () => {
    const { report, calls, attempts } = await quickRun('outage');
    const byName = new Map(report.clients.map((c) => [c.client, c]));
    const phase = report.phases.find((p) => p.kind === 'outage');
    if (!phase) throw new Error('the outage scenario has an outage phase');
    // The second half of the outage: every circuit has opened by then.
    const from = report.startedAt + (phase.startMs + phase.endMs) / 2;
    const to = report.startedAt + phase.endMs;
    const perCall = new Map<string, number>();
    for (const a of attempts) perCall.set(a.callId, (perCall.get(a.callId) ?? 0) + (a.count ?? 1));
    for (const protocol of ['grpc', 'trpc']) {
      const usual = byName.get(`${protocol}/usual`)?.outageAttemptsPerCall;
      const breakwater = byName.get(`${protocol}/breakwater`)?.outageAttemptsPerCall;
      // Up to 3 attempts a call; on a starved machine fewer fit in the 1 s
      // deadline, but any retrying client is clearly above 1 (a single try is ≤ 1).
      expect(usual, protocol).toBeGreaterThan(1.2);
      // Breakwater runs the standard circuit the READMEs recommend. The whole phase
      // includes the calls (with failovers and hedges) that open the circuits.
      expect(breakwater, protocol).toBeLessThan(BREAKWATER_OUTAGE_MAX);
      // Once every circuit is open the router sends one probe per 200 ms across all
      // the replicas (5/s whatever their number or the offered rate): 0.25 per call
      // at the quick run's 20 calls/s, measured 0.03-0.2.
      const late = calls.filter(
        (c) => c.client === `${protocol}/breakwater` && c.startedAt >= from && c.startedAt < to,
      );
      const lateLoad = late.reduce((n, c) => n + (perCall.get(c.callId) ?? 0), 0) / late.length;
      expect(lateLoad, protocol).toBeLessThanOrEqual(BREAKWATER_OPEN_MAX);
    }
    // The servers push SERVING when they heal (gRPC Health/Watch, the tRPC servers'
    // /healthz event stream), so Breakwater's next call goes to one: it is back with the
    // plain clients, not an outage-gate interval (200 ms) later (before the watch:
    // 168 ms against 3-6 ms). A plain client's call started while the servers were
    // being healed can count as its first success, so Breakwater may be one call later.
    const rows = computeFindings(report, calls, attempts).recovery;
    const first = (lane: string) =>
      rows.find((r) => r.client === lane)?.firstSuccessMs ?? Number.POSITIVE_INFINITY;
    const recovery = report.phases.find((p) => p.kind === 'recovery');
    if (!recovery) throw new Error('the outage scenario has a recovery phase');
    const ready = report.startedAt + recovery.readyMs;
    for (const protocol of ['grpc', 'trpc']) {
      const slowestPeer = Math.max(first(`${protocol}/none`), first(`${protocol}/usual`));
      expect(first(`${protocol}/breakwater`), JSON.stringify(rows)).toBeLessThanOrEqual(
        slowestPeer + 1_000 / QUICK_RATE + RECOVERY_MARGIN_MS,
      );
      // Sharper: its first call started once the push has had time to land succeeds
      // (the outage gate alone lets one through only every 200 ms).
      const next = calls
        .filter((c) => c.client === `${protocol}/breakwater` && c.startedAt >= ready + PUSH_MS)
        .sort((a, b) => a.startedAt - b.startedAt)[0];
      expect(next?.ok, protocol).toBe(true);
    }
  }, 120_000);

  // Not a latency percentile (on a loaded machine CPU starvation sets the p99
  // of every client) but what the servers saw. A call "waited" when the slow
  // replica answered it after its injected delay; the slow replica "lost a
  // race" when it received an attempt of a call another replica answered:
  // a hedge won. Without hedging Breakwater cannot make it lose a race.
  it('--scenario tail: Breakwater races the slow replica and does not wait for it; the plain client does', async () => {
    // Twice the default rate: a 5% tail on one replica needs enough calls to show at all.
    const { report, calls, attempts } = await quickRun('tail', '--rate', '50');
    const inPhaseAll = faultPhaseCalls(report, calls);
    const inPhase = (client: string) => inPhaseAll(client).filter((c) => c.ok);
    const reached = new Map<string, Set<string>>();
    const perCall = new Map<string, number>();
    for (const a of attempts) {
      reached.set(a.callId, (reached.get(a.callId) ?? new Set()).add(a.replica));
      perCall.set(a.callId, (perCall.get(a.callId) ?? 0) + (a.count ?? 1));
    }
    const attemptsOf = (callId: string) => perCall.get(callId) ?? 0;
    const count = (client: string, slow: string) => {
      let waited = 0;
      let lostRaces = 0;
      for (const c of inPhase(client)) {
        if (c.replica === slow && c.latencyMs >= TAIL_LATENCY.extraMs) waited++;
        else if (c.replica !== slow && reached.get(c.callId)?.has(slow)) lostRaces++;
      }
      return { waited, lostRaces, calls: inPhase(client).length };
    };
    for (const protocol of ['grpc', 'trpc']) {
      const slow = `${protocol}-b`;
      const breakwater = count(`${protocol}/breakwater`, slow);
      const plain = count(`${protocol}/none`, slow);
      const seen = `${protocol}: breakwater ${JSON.stringify(breakwater)}, none ${JSON.stringify(plain)}`;
      // What an ordinary call takes on this machine right now: the plain client's median.
      const typical = inPhase(`${protocol}/none`)
        .map((c) => c.latencyMs)
        .sort((a, b) => a - b)[Math.floor(plain.calls / 2)];
      if (typical !== undefined && typical < TAIL_LATENCY.extraMs / 4) {
        // The slow replica's delay stands out: the plain client waited for it, Breakwater's
        // hedges and load-aware routing waited less, and it never lost a race for the plain client.
        expect(plain.waited, seen).toBeGreaterThan(0);
        expect(breakwater.waited, seen).toBeLessThan(plain.waited);
        expect(plain.lostRaces, seen).toBe(0);
      } else {
        // A machine so starved that an ordinary call takes longer than a
        // quarter of the injected delay cannot tell the slow replica from the
        // others, and a hedge at p95 cannot fire within the deadline: the run
        // can only show that hedging never cost more than its one extra
        // attempt per call (maxHedges 1), however late the answers came.
        const most = Math.max(
          0,
          ...inPhaseAll(`${protocol}/breakwater`).map((c) => attemptsOf(c.callId)),
        );
        expect(most, seen).toBeLessThanOrEqual(2);
      }
    }
  }, 120_000);

  // Replica A saturates: the clients that wait on it lose the calls it queues past their
  // deadline; what the server saw says A was sent calls it could not answer in time.
  it('--scenario overload: the saturated replica answers too late; Breakwater answers more than the plain client', async () => {
    const { report, calls, attempts } = await quickRun('overload');
    const inPhase = faultPhaseCalls(report, calls);
    const plain = inPhase('grpc/none');
    const breakwater = inPhase('grpc/breakwater');
    const share = (list: typeof calls) => list.filter((c) => c.ok).length / list.length;
    // round_robin sends A a third of the plain client's calls, and A queues them past the deadline.
    expect(plain.filter((c) => c.error === 'DEADLINE_EXCEEDED').length).toBeGreaterThan(0);
    expect(share(breakwater)).toBeGreaterThan(share(plain));
    const sentToA = new Set(attempts.filter((a) => a.replica === 'grpc-a').map((a) => a.callId));
    expect(plain.some((c) => sentToA.has(c.callId))).toBe(true);
  }, 120_000);

  it('rejects bad options naming them', () => {
    expect(() => parseDemoArgs(['--rate', 'lots'], false)).toThrow(/--rate/);
    expect(() => parseDemoArgs(['--scenario', 'nope'], false)).toThrow(/--scenario/);
    expect(parseDemoArgs(['--scenario', 'overload'], false)).toMatchObject({
      scenario: 'overload',
    });
    expect(parseDemoArgs(['--help'], true)).toBe('help');
    expect(parseDemoArgs([], true)).toMatchObject({ durationS: 26, rate: 25, progress: true });
    expect(parseDemoArgs(['--quick'], false)).toMatchObject({ durationS: 8, progress: false });
    expect(parseDemoArgs([], true, 132)).toMatchObject({ columns: 132 });
    expect(parseDemoArgs([], false)).toMatchObject({ columns: 80 });
    // `pnpm demo -- --scenario outage`: pnpm passes the `--` on to the script.
    expect(parseDemoArgs(['--', '--scenario', 'outage'], false)).toMatchObject({
      scenario: 'outage',
    });
  });
});
