// The benchmark suite: `pnpm bench` runs everything; `pnpm bench --only <name>[,<name>]` runs
// some suites; `--quick` shortens every suite (a smoke run, not for publishing); `--render`
// rewrites BENCHMARKS.md's generated section from summary.json and runs nothing; `--list`
// prints the suite names and the settings each suite reads (harness/args.ts: e.g. `--outages`,
// `--rate`, `--group` for outage-recovery, `--duration`, `--stacks`, `--parallel` for soak,
// `--otel-rounds`, `--otel-calls`, `--own-only` for otel-cost,
// `--keyed` for redis-fleet). An unknown flag, or a setting no selected suite reads, is refused.
// redis-fleet needs redis-server on PATH: without it a plain run skips it and says so.
// Writes bench/results/summary.json (the tables, targets and notes: small, committed), bench/results/raw.json (also every suite's raw figures: gitignored) and
// regenerates the generated section of BENCHMARKS.md (results of suites not run this time
// are kept from the last run's summary).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as breakwaterCore from '@breakwater/core';
import * as breakwaterGrpcJs from '@breakwater/grpc-js';
import * as breakwaterNiceGrpc from '@breakwater/nice-grpc';
import * as breakwaterOtel from '@breakwater/otel';
import * as breakwaterTrpc from '@breakwater/trpc';
import { parseArgs, SETTING_FLAGS, UsageError } from './harness/args.js';
import { assertBuiltPackages } from './harness/dist-check.js';
import { machineInfo } from './harness/machine.js';
import {
  type LoadAverages,
  type Results,
  renderMarkdown,
  spliceGenerated,
} from './harness/markdown.js';
import { type Suite, skippedResult, unavailableSuites, withoutRawData } from './harness/report.js';
import { adaptersSuite } from './suites/adapters.js';
import { chainSuite } from './suites/chain/index.js';
import { faultSuites } from './suites/faults/index.js';
import { microSuite } from './suites/micro.js';
import { otelCostSuite } from './suites/otel-cost.js';
import { overloadSuite } from './suites/overload/index.js';
import { partialSuite } from './suites/partial/index.js';
import { outageRecoverySuite } from './suites/recovery/outage-recovery.js';
import { soakSuite } from './suites/recovery/soak.js';
import { redisFleetSuite } from './suites/redis-fleet.js';

// Measure what users install (see harness/dist-check.ts).
assertBuiltPackages({
  '@breakwater/core': breakwaterCore,
  '@breakwater/grpc-js': breakwaterGrpcJs,
  '@breakwater/nice-grpc': breakwaterNiceGrpc,
  '@breakwater/otel': breakwaterOtel,
  '@breakwater/trpc': breakwaterTrpc,
});

const here = dirname(fileURLToPath(import.meta.url));
const summaryFile = join(here, 'results', 'summary.json');
const rawFile = join(here, 'results', 'raw.json');
const markdownFile = join(here, '..', 'BENCHMARKS.md');

const suites: Suite[] = [
  microSuite,
  otelCostSuite,
  adaptersSuite,
  ...faultSuites,
  partialSuite,
  overloadSuite,
  chainSuite,
  outageRecoverySuite,
  soakSuite,
  redisFleetSuite,
];

function writeMarkdown(results: Results): void {
  const current = existsSync(markdownFile)
    ? readFileSync(markdownFile, 'utf8')
    : '# Benchmarks\n\n';
  const section = renderMarkdown(
    results,
    suites.map((s) => s.name),
  );
  writeFileSync(markdownFile, spliceGenerated(current, section));
}

function loadNow(): LoadAverages {
  const [one = 0, five = 0, fifteen = 0] = loadavg().map((x) => Math.round(x * 100) / 100);
  return { one, five, fifteen };
}

type SuiteOutput = Awaited<ReturnType<Suite['run']>>;

/**
 * Runs one suite in a fresh Node process: no JIT state, heap or timers left by
 * one suite can bend the next one's numbers.
 */
async function runInChild(name: string, quick: boolean): Promise<SuiteOutput> {
  const out = join(tmpdir(), `breakwater-bench-${process.pid}-${name}.json`);
  const args = [...process.execArgv, fileURLToPath(import.meta.url), '--child', name, out];
  if (quick) args.push('--quick');
  const code = await new Promise<number | null>((resolve) => {
    spawn(process.execPath, args, { stdio: 'inherit' }).once('exit', (c) => resolve(c));
  });
  if (code !== 0 || !existsSync(out))
    throw new Error(`suite ${name} failed (exit ${String(code)})`);
  const result = JSON.parse(readFileSync(out, 'utf8')) as SuiteOutput;
  rmSync(out);
  return result;
}

async function main(): Promise<void> {
  const names = suites.map((s) => s.name);
  const { only, quick, list, render, child, settings } = parseArgs(process.argv.slice(2), {
    suites: names,
    env: process.env,
  });
  if (child) {
    const suite = suites.find((s) => s.name === child.suite);
    if (!suite) throw new Error(`unknown suite ${child.suite}`);
    writeFileSync(child.out, JSON.stringify(await suite.run({ quick })));
    return;
  }
  if (list) {
    for (const s of suites) {
      console.log(`${s.name.padEnd(16)} ${s.title}`);
      for (const f of SETTING_FLAGS.filter((x) => x.suites.includes(s.name))) {
        console.log(`${''.padEnd(18)}${f.flag}${f.kind === 'switch' ? '' : ' <value>'}: ${f.help}`);
      }
    }
    return;
  }
  if (render) {
    // The renderer changed, or the hand-written part did: no suite runs.
    writeMarkdown(JSON.parse(readFileSync(summaryFile, 'utf8')) as Results);
    console.log(`rewrote the generated section of ${markdownFile} from ${summaryFile}`);
    return;
  }
  // Suite settings travel to each suite's own process in its environment.
  Object.assign(process.env, settings);
  const selected = suites.filter((s) => !only || only.includes(s.name));
  for (const s of selected) {
    try {
      s.checkSettings?.(quick);
    } catch (e) {
      throw new UsageError(`${s.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const skipped = unavailableSuites(selected, only !== undefined);
  const machine = machineInfo();
  const previous: Results | undefined = existsSync(summaryFile)
    ? (JSON.parse(readFileSync(summaryFile, 'utf8')) as Results)
    : undefined;
  const started = performance.now();
  const done: Results['suites'] = {};
  for (const suite of selected) {
    console.log(`\n== ${suite.name}: ${suite.title}`);
    const t0 = performance.now();
    const ranAt = new Date().toISOString();
    const load = loadNow();
    const why = skipped.get(suite.name);
    if (why) console.log(`== ${suite.name} SKIPPED: ${why}`);
    else console.log(`   load average ${load.one} / ${load.five} / ${load.fifteen}`);
    const result = why ? skippedResult(suite.name, why) : await runInChild(suite.name, quick);
    const seconds = (performance.now() - t0) / 1000;
    if (!why) console.log(`== ${suite.name} done in ${seconds.toFixed(1)} s`);
    done[suite.name] = {
      name: suite.name,
      title: suite.title,
      ranAt,
      seconds,
      machine,
      ...(why ? {} : { load }),
      ...result,
    };
  }
  const totalSeconds = (performance.now() - started) / 1000;
  const full = !only && !quick;
  const results: Results = full
    ? { machine, command: 'pnpm bench', totalSeconds, suites: done }
    : {
        machine: previous?.machine ?? machine,
        command: previous?.command ?? 'pnpm bench',
        totalSeconds: previous?.totalSeconds ?? totalSeconds,
        suites: { ...(previous?.suites ?? {}), ...done },
      };
  mkdirSync(dirname(summaryFile), { recursive: true });
  if (quick) {
    // A smoke run never replaces published figures.
    const quickFile = join(here, 'results', 'quick.json');
    writeFileSync(quickFile, `${JSON.stringify({ machine, suites: done }, null, 2)}\n`);
    console.log(
      `\nquick run: results written to ${quickFile}; summary.json and BENCHMARKS.md left alone`,
    );
  } else {
    // Raw figures of this run only: suites kept from an earlier run are in its summary.
    writeFileSync(rawFile, `${JSON.stringify({ machine, suites: done }, null, 2)}\n`);
    const summary: Results = { ...results, suites: withoutRawData(results.suites) };
    writeFileSync(summaryFile, `${JSON.stringify(summary, null, 2)}\n`);
    writeMarkdown(summary);
    console.log(
      `\nwrote ${summaryFile}, ${rawFile} and BENCHMARKS.md (${totalSeconds.toFixed(0)} s)`,
    );
  }
  for (const s of Object.values(done)) {
    if (s.skipped) console.log(`  [skipped] ${s.name}: ${s.skipped}`);
  }
  for (const t of Object.values(done).flatMap((s) => s.targets)) {
    const status = t.met === null ? 'not measured' : t.met ? 'met' : 'NOT MET';
    console.log(`  [${status}] ${t.target}: ${t.figure}${t.note ? ` — ${t.note}` : ''}`);
  }
}

await main().catch((e: unknown) => {
  // A usage error reads better without the stack; anything else keeps it.
  console.error(e instanceof UsageError ? `bench: ${e.message}` : e);
  process.exit(2);
});
// Sockets of closed gRPC channels can keep the loop alive for a while; the results are written.
process.exit(0);
