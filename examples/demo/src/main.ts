import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type AttemptRecord,
  type CallRecord,
  runScenario,
  type ScenarioClient,
  type ScenarioReport,
  timelineDuration,
} from '@breakwater/chaos';
import { type DemoOptions, parseDemoArgs, USAGE } from './args.js';
import { computeFindings, type Findings, GOALS_HEADING } from './findings.js';
import { createGrpcLanes } from './grpc-lanes.js';
import { describeLane } from './lane-descriptions.js';
import { barsView, linesView, type ProgressView } from './progress.js';
import { renderReport } from './report-html.js';
import { SCENARIOS } from './scenarios.js';
import { startDemoServers } from './servers.js';
import { formatTable, type TableRow, tableRows, wrapLabelled } from './table.js';
import {
  formatMetrics,
  type LaneMetrics,
  LaneTelemetry,
  METRICS_HOW_TO_READ,
  markEnd,
  markingPhases,
} from './telemetry.js';
import { createTrpcLanes } from './trpc-lanes.js';

/** What a demo run produced. */
export interface DemoResult {
  report: ScenarioReport;
  rows: TableRow[];
  reportPath: string;
  /** Every call every client made. */
  calls: CallRecord[];
  /** Every attempt the servers counted, by call id and replica. */
  attempts: AttemptRecord[];
  /** The computed notes the terminal and the report show. */
  findings: Findings;
  /** Per Breakwater lane and phase, what its OpenTelemetry metrics counted. */
  metrics: LaneMetrics[];
}

/** Opens connections before the clock starts, so the first second measures the clients, not TCP setup. */
async function warmUp(lanes: readonly ScenarioClient[]): Promise<void> {
  await Promise.all(
    lanes.flatMap((lane) =>
      Array.from({ length: 6 }, (_, i) =>
        lane.call({ callId: `warmup-${lane.name}-${i}`, index: i }).catch(() => undefined),
      ),
    ),
  );
}

/** Runs the demo: servers, clients, the scenario, then the table and the HTML report. */
export async function runDemo(
  options: DemoOptions,
  log: (line: string) => void = console.log,
): Promise<DemoResult> {
  const totalMs = Math.round(options.durationS * 1000);
  const columns = options.columns;
  log(
    `Breakwater demo: scenario "${options.scenario}", ${options.durationS} s at ${options.rate} calls/s per client`,
  );
  log('Starting 3 gRPC replicas and 2 tRPC servers, each in its own process…');
  const servers = await startDemoServers();
  // The Breakwater lanes report to their own in-process OpenTelemetry SDK, read at each phase start.
  const metered = [new LaneTelemetry('grpc/breakwater'), new LaneTelemetry('trpc/breakwater')];
  const [grpcMetrics, trpcMetrics] = metered as [LaneTelemetry, LaneTelemetry];
  // The adaptive limit's lane only where a server saturates.
  const grpc = createGrpcLanes(servers.grpc, grpcMetrics.telemetry, {
    adaptive: options.scenario === 'overload',
  });
  const trpc = createTrpcLanes(servers.trpc, trpcMetrics.telemetry);
  const lanes = [...grpc.lanes, ...trpc.lanes];
  const nameWidth = Math.max(...lanes.map((l) => l.name.length));
  log('');
  log('The clients (every call has a 1 s deadline):');
  for (const lane of lanes) {
    for (const line of wrapLabelled(
      lane.name,
      describeLane(lane.name).config,
      nameWidth,
      columns,
    )) {
      log(line);
    }
  }
  log('');
  let attempts: AttemptRecord[] = [];
  let view: ProgressView | undefined;
  try {
    await warmUp(lanes);
    const phases = markingPhases(SCENARIOS[options.scenario](servers.targets, totalMs), metered);
    const expected = Math.ceil((options.rate * timelineDuration(phases)) / 1000);
    view = options.progress
      ? barsView(
          phases,
          lanes.map((l) => l.name),
          expected,
          columns,
        )
      : linesView(log);
    const run = await runScenario({
      phases,
      clients: lanes,
      rate: options.rate,
      attempts: async () => {
        attempts = await servers.attempts();
        return attempts;
      },
      onProgress: (p) => view?.update(p),
    });
    view.stop();
    view = undefined;
    // Every call has ended (the load drained): the last reading closes the last phase.
    await markEnd(metered);
    const metrics = metered.map((m) => m.phases(run.report));
    const rows = tableRows(run.report);
    const findings = computeFindings(run.report, run.calls, attempts);
    log('');
    log(formatTable(rows, columns));
    log('');
    log(GOALS_HEADING);
    for (const p of findings.protocols) {
      for (const line of [p.verdict, ...p.losses]) {
        for (const l of wrapLabelled(`${p.protocol}:`, line, 5, columns)) log(l);
      }
    }
    if (findings.protocols.some((p) => p.comeback.length > 0)) {
      log('');
      log('How Breakwater came back after each recovery (why: examples/demo/README.md):');
      for (const p of findings.protocols) {
        for (const line of p.comeback) {
          for (const l of wrapLabelled(`${p.protocol}:`, line, 5, columns)) log(l);
        }
      }
    }
    log('');
    log("What Breakwater's own metrics counted, per phase (OpenTelemetry):");
    for (const line of formatMetrics(metrics, columns)) log(line);
    for (const line of wrapLabelled('Note:', METRICS_HOW_TO_READ, 5, columns)) log(line);
    const reportPath = resolve(options.out);
    const meta = {
      scenario: options.scenario,
      rate: options.rate,
      durationS: options.durationS,
      node: process.version,
      date: new Date().toISOString(),
    };
    await mkdir(dirname(reportPath), { recursive: true });
    await writeFile(reportPath, renderReport(run.report, rows, meta, findings, metrics));
    if (options.json) {
      await writeFile(
        `${reportPath}.json`,
        JSON.stringify({ meta, table: rows, report: run.report, calls: run.calls, metrics }),
      );
    }
    log('');
    log(`Report: ${shortPath(reportPath)}`);
    return { report: run.report, rows, reportPath, calls: run.calls, attempts, findings, metrics };
  } finally {
    view?.stop();
    grpc.close();
    await servers.close();
  }
}

/** `path` relative to the working directory when it is inside it (shorter on a narrow terminal). */
function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

async function cli(): Promise<number> {
  let options: ReturnType<typeof parseDemoArgs>;
  try {
    const tty = process.stdout.isTTY === true;
    options = parseDemoArgs(process.argv.slice(2), tty, tty ? process.stdout.columns : 80);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  await runDemo(options);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // tsx turns on source maps; every failed call builds an error stack, and
  // mapping those stacks costs more CPU than the calls themselves.
  process.setSourceMapsEnabled(false);
  cli().then(
    // Keep-alive sockets and grpc-js reconnect timers would hold the process a while longer.
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
