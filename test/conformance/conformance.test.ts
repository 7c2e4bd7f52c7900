import { systemSleep } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { DRIVERS } from './drivers.js';
import { OPTION_ROWS, SCENARIOS } from './scenarios.js';
import { type ScriptedServer, startScripted } from './servers.js';
import { KNOWN_FAILURES } from './status.js';
import {
  type ByTransport,
  type CallOutcome,
  type ConformanceOptions,
  type Driver,
  ENTRY_POINTS,
  type EntryPoint,
  type RetryEvent,
  type Scenario,
  type ServerAttempt,
} from './types.js';

const pick = <T>(value: ByTransport<T>, transport: 'grpc' | 'trpc'): T =>
  typeof value === 'object' && value !== null && 'grpc' in value
    ? (value as { grpc: T; trpc: T })[transport]
    : (value as T);

function withListener(
  options: ConformanceOptions,
  events: RetryEvent[],
  throws: boolean,
): ConformanceOptions {
  if (options.retry === false || options.retry === undefined) return options;
  return {
    ...options,
    retry: {
      ...options.retry,
      onRetry: (event) => {
        events.push({ attempt: event.attempt, delayMs: event.delayMs });
        if (throws) throw new Error('conformance: a listener that throws');
      },
    },
  };
}

function attemptsOf(servers: readonly ScriptedServer[], callId?: string): ServerAttempt[] {
  return servers
    .flatMap((s) => s.attempts())
    .filter((a) => callId === undefined || a.callId === callId)
    .sort((a, b) => a.receivedAt - b.receivedAt);
}

function inRange(label: string, value: number, [min, max]: readonly [number, number]): void {
  expect(value, `${label} = ${value}, expected within [${min}, ${max}]`).toBeGreaterThanOrEqual(
    min,
  );
  expect(value, `${label} = ${value}, expected within [${min}, ${max}]`).toBeLessThanOrEqual(max);
}

/** Aborts `controller` `ms` after a server received the call's first attempt (not on a timer from the start: a loaded machine may take longer than that to deliver it). */
async function cancelAfterArrival(
  servers: readonly ScriptedServer[],
  callId: string,
  ms: number,
  controller: AbortController,
): Promise<void> {
  for (let waited = 0; attemptsOf(servers, callId).length === 0 && waited < 5_000; waited += 10) {
    await systemSleep(10);
  }
  await systemSleep(ms);
  controller.abort();
}

async function run(scenario: Scenario, driver: Driver): Promise<void> {
  // With a warm-up, the servers start healthy and play their scripts after it.
  const warm = scenario.warmUpCalls !== undefined;
  const scripts = [scenario.primary];
  if (driver.routing && scenario.secondary !== undefined) scripts.push(scenario.secondary);
  const servers: ScriptedServer[] = [
    await startScripted(driver.transport, 'primary', warm ? {} : scenario.primary),
  ];
  if (scripts.length > 1) {
    servers.push(
      await startScripted(driver.transport, 'secondary', warm ? {} : (scripts[1] ?? {})),
    );
  }
  const events: RetryEvent[] = [];
  const options = withListener(scenario.options, events, scenario.listenerThrows === true);
  let harness: ReturnType<Driver['open']> | undefined;
  try {
    harness = driver.open(
      { primary: servers[0]?.address ?? '', secondary: servers[1]?.address },
      options,
    );
    if (scenario.choreography !== undefined) {
      const open = harness;
      await scenario.choreography({
        entry: driver.entry,
        transport: driver.transport,
        start: (callId, request) => open.call(callId, request ?? {}),
        arrived: async (callId) => {
          for (let waited = 0; attemptsOf(servers, callId).length === 0; waited += 10) {
            if (waited >= 5_000) throw new Error(`no server saw ${callId} within 5 s`);
            await systemSleep(10);
          }
        },
        play: (script) => servers[0]?.play(script),
        attempts: (callId) => attemptsOf(servers, callId),
      });
      return;
    }
    for (let i = 1; i <= (scenario.warmUpCalls ?? 0); i++) {
      const o = await harness.call(`warm-${i}`, {});
      expect(o.code, `warm-up call ${i}: ${String(o.error)}`).toBe('OK');
    }
    if (warm) {
      for (const [i, s] of servers.entries()) s.play(scripts[i] ?? {});
    }
    const outcomes: CallOutcome[] = [];
    for (let i = 1; i <= (scenario.calls ?? 1); i++) {
      const cancelMs = scenario.call?.cancelAfterArrivalMs;
      const aborted = scenario.call?.abortedBefore === true;
      const controller = cancelMs === undefined && !aborted ? undefined : new AbortController();
      if (aborted) controller?.abort();
      else if (controller) void cancelAfterArrival(servers, `call-${i}`, cancelMs ?? 0, controller);
      outcomes.push(
        await harness.call(`call-${i}`, { ...scenario.call, signal: controller?.signal }),
      );
    }
    if (scenario.settleMs) await systemSleep(scenario.settleMs);
    if (scenario.check) {
      scenario.check({ outcomes, attempts: attemptsOf(servers), retryEvents: events });
    }
    const want = scenario.expect;
    if (want === undefined) return;
    const got = outcomes[0] as CallOutcome;
    expect(got.code, `caller got ${String(got.error)}`).toBe(pick(want.caller, driver.transport));
    // Server-side outcomes settle a moment after the caller's (a loser's cancellation travels).
    const expected = want.attempts.map((a) => pick(a, driver.transport));
    await expect
      .poll(() => attemptsOf(servers, 'call-1').map((a) => a.outcome), { timeout: 2_000 })
      .toEqual(expected);
    const attempts = attemptsOf(servers, 'call-1');
    if (want.servedBy !== undefined) {
      const answered = got.servedBy ?? attempts.findLast((a) => a.outcome === 'OK')?.server;
      expect(answered).toBe(want.servedBy);
    }
    want.gapsMs?.forEach((range, i) => {
      const gap = (attempts[i + 1]?.receivedAt ?? Number.NaN) - (attempts[i]?.receivedAt ?? 0);
      inRange(`gap after attempt ${i + 1}`, gap, range);
    });
    if (want.retryEvents !== undefined) {
      expect(events.map((e) => e.attempt)).toEqual(want.retryEvents);
    }
    want.retryDelaysMs?.forEach((range, i) => {
      inRange(`onRetry #${i + 1} delayMs`, events[i]?.delayMs ?? Number.NaN, range);
    });
    if (want.elapsedMs !== undefined) inRange('caller elapsed ms', got.elapsedMs, want.elapsedMs);
  } finally {
    await harness?.close();
    await Promise.all(servers.map((s) => s.close()));
  }
}

describe('conformance table', () => {
  it('covers every entry point in every row: run, or not applicable with a reason', () => {
    expect(Object.keys(DRIVERS).sort()).toEqual([...ENTRY_POINTS].sort());
    for (const scenario of SCENARIOS) {
      for (const [entry, reason] of Object.entries(scenario.notApplicable ?? {})) {
        expect(ENTRY_POINTS, `${scenario.id}: unknown entry point`).toContain(entry);
        expect(reason.length, `${scenario.id} × ${entry}: a reason`).toBeGreaterThan(20);
      }
      const runs = ENTRY_POINTS.filter((e) => scenario.notApplicable?.[e] === undefined);
      expect(runs.length, `${scenario.id} runs somewhere`).toBeGreaterThan(0);
      expect(
        [scenario.expect, scenario.check, scenario.choreography].filter((x) => x !== undefined),
        `${scenario.id}: one of expect, check or choreography`,
      ).toHaveLength(1);
    }
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(SCENARIOS.length);
    for (const row of OPTION_ROWS) {
      for (const [entry, reason] of Object.entries(row.notApplicable ?? {})) {
        expect(ENTRY_POINTS, `${row.id}: unknown entry point`).toContain(entry);
        expect(reason.length, `${row.id} × ${entry}: a reason`).toBeGreaterThan(20);
      }
    }
    for (const [entry, pairs] of Object.entries(KNOWN_FAILURES)) {
      for (const id of Object.keys(pairs ?? {})) {
        if (id === '*') continue;
        const scenario = SCENARIOS.find((s) => s.id === id);
        expect(scenario, `KNOWN_FAILURES names ${id}`).toBeDefined();
        expect(scenario?.notApplicable?.[entry as EntryPoint]).toBeUndefined();
      }
    }
  });

  for (const scenario of SCENARIOS) {
    describe(`${scenario.id}: ${scenario.title}`, () => {
      for (const entry of ENTRY_POINTS) {
        if (scenario.notApplicable?.[entry] !== undefined) continue;
        const known = KNOWN_FAILURES[entry];
        const failing = known?.[scenario.id] ?? known?.['*'];
        const test = failing === undefined ? it : it.fails;
        const name = failing === undefined ? entry : `${entry} (known failure: ${failing})`;
        test(name, () => run(scenario, DRIVERS[entry]), 15_000);
      }
    });
  }

  for (const row of OPTION_ROWS) {
    describe(`bad options ${row.id}: ${row.error.name} naming ${row.path.source}`, () => {
      for (const entry of ENTRY_POINTS) {
        if (row.notApplicable?.[entry] !== undefined) continue;
        it(entry, async () => {
          let harness: ReturnType<Driver['open']> | undefined;
          // No server: construction must refuse before anything is sent.
          const open = () => {
            harness = DRIVERS[entry].open({ primary: '127.0.0.1:1' }, row.options);
          };
          try {
            expect(open).toThrow(row.error);
            expect(open).toThrow(row.path);
          } finally {
            await harness?.close();
          }
        });
      }
    });
  }
});
