/**
 * Cost of `telemetry` on protect's success path, interleaved in one run:
 * the core before the hook (a copy of its source at the base commit, given as
 * BREAKWATER_BASE_CORE), this core without `telemetry`, and this core with
 * `otelTelemetry()` on a real OpenTelemetry MeterProvider (no active span, so
 * only metrics). Run in bench/ with the root tsconfig (its paths map `@breakwater/*` to src):
 *   git archive d7be53a packages/core/src | tar -x -C /tmp/bw-base
 *   BREAKWATER_BASE_CORE=/tmp/bw-base/packages/core/src/index.ts \
 *     TSX_TSCONFIG_PATH=../tsconfig.json node --expose-gc --import tsx otel-cost.ts  (in bench/)
 * A before/after of this package: BREAKWATER_BASE_OTEL names an older copy of
 * packages/otel/src/index.ts whose `@breakwater/core*` imports point at the
 * core copy of BREAKWATER_BASE_CORE (in a folder under bench/, or one whose
 * `node_modules` links to bench/node_modules, so it resolves the same
 * `@opentelemetry/api`); it runs on that core, with the SDK and the no-op meter:
 *   git archive <base> packages/core/src packages/otel/src | tar -x -C /tmp/bw-base
 *   ln -s "$PWD/node_modules" /tmp/bw-base/node_modules   (in bench/)
 *   then point the copy's `@breakwater/core`, `/grpc` and `/internal` imports at
 *   /tmp/bw-base/packages/core/src/{index,grpc/index,internal/index}.ts.
 * ROUNDS and CALLS set the interleaved rounds and the calls per batch; OWN_ONLY=1
 * leaves the SDK variants out (more rounds of the package's own share in the same time).
 */
import { protect } from '@breakwater/core';
import { otelTelemetry } from '@breakwater/otel';
import { type MeterProvider as ApiMeterProvider, type Meter, metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { batchCost, bytesPerCall, type Call, calibrate, median } from './harness/micro.js';

class Reader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The API's own no-op provider (what `metrics.getMeterProvider()` returns before an SDK registers). */
class NoopMeterProvider implements ApiMeterProvider {
  private readonly meter: Meter = metrics.getMeterProvider().getMeter('noop');
  getMeter(): Meter {
    return this.meter;
  }
}

const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const stack = {
  retry: { attempts: 3 },
  attemptTimeoutMs: 1_000,
  circuit: { failureThreshold: 5, openDurationMs: 30_000 },
  concurrency: { limit: 100 },
} as const;
const op = async () => 1;

const variants: Array<{ name: string; call: Call }> = [];
const withSdk = process.env.OWN_ONLY !== '1';
const basePath = process.env.BREAKWATER_BASE_CORE;
const baseOtelPath = process.env.BREAKWATER_BASE_OTEL;
const baseMeterProvider = new MeterProvider({ readers: [new Reader()] });
if (basePath !== undefined) {
  const base = (await import(basePath)) as { protect: typeof protect };
  const run = base.protect(stack);
  variants.push({ name: 'base core (no hook)', call: () => run(op) });
  if (baseOtelPath !== undefined) {
    const baseOtel = (await import(baseOtelPath)) as { otelTelemetry: typeof otelTelemetry };
    const sdk = base.protect({
      ...stack,
      telemetry: baseOtel.otelTelemetry({ meterProvider: baseMeterProvider }),
    });
    if (withSdk) variants.push({ name: 'base otel on', call: () => sdk(op) });
    const noop = base.protect({
      ...stack,
      telemetry: baseOtel.otelTelemetry({ meterProvider: new NoopMeterProvider() }),
    });
    variants.push({ name: 'base otel, no-op meter', call: () => noop(op) });
  }
}
const off = protect(stack);
variants.push({ name: 'telemetry off', call: () => off(op) });
const on = protect({ ...stack, telemetry: otelTelemetry({ meterProvider }) });
if (withSdk) variants.push({ name: 'otelTelemetry() on', call: () => on(op) });
// The package's own share: the same calls into the API's no-op meter (no SDK work).
const noop = protect({
  ...stack,
  telemetry: otelTelemetry({ meterProvider: new NoopMeterProvider() }),
});
variants.push({ name: 'otel, no-op meter', call: () => noop(op) });

const rounds = Number(process.env.ROUNDS ?? 15);
const n = Number(process.env.CALLS ?? 0) || (await calibrate(variants[0]?.call as Call, 20));
const cpu = new Map<string, number[]>(variants.map((v) => [v.name, []]));
const deltas: number[] = [];
const ownDeltas: number[] = [];
const baseOwnDeltas: number[] = [];
for (let r = 0; r < rounds; r++) {
  // The order rotates every round, so no variant always runs first.
  const order = variants.map((_, i) => variants[(i + r) % variants.length] as (typeof variants)[0]);
  const costs = new Map<string, number>();
  for (const v of order) {
    await batchCost(v.call, n >> 1);
    const { cpuNs } = await batchCost(v.call, n);
    cpu.get(v.name)?.push(cpuNs);
    costs.set(v.name, cpuNs);
  }
  deltas.push((costs.get('otelTelemetry() on') ?? 0) - (costs.get('telemetry off') ?? 0));
  ownDeltas.push((costs.get('otel, no-op meter') ?? 0) - (costs.get('telemetry off') ?? 0));
  const baseOwn = costs.get('base otel, no-op meter');
  if (baseOwn !== undefined) baseOwnDeltas.push(baseOwn - (costs.get('base core (no hook)') ?? 0));
}
console.log(
  `${rounds} interleaved rounds of ${n} calls; CPU ns/call, median [min–max]; bytes/call`,
);
for (const v of variants) {
  const xs = cpu.get(v.name) as number[];
  const bytes = await bytesPerCall(v.call);
  console.log(
    `${v.name.padEnd(22)} ${median(xs).toFixed(0).padStart(6)} [${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}]  ${bytes?.toFixed(0) ?? '?'} B`,
  );
}
if (withSdk)
  console.log(
    `added by otel per call (paired per round): median ${median(deltas).toFixed(0)} ns [${Math.min(...deltas).toFixed(0)}–${Math.max(...deltas).toFixed(0)}]`,
  );
console.log(
  `added without SDK work (no-op meter): median ${median(ownDeltas).toFixed(0)} ns [${Math.min(...ownDeltas).toFixed(0)}–${Math.max(...ownDeltas).toFixed(0)}]`,
);
if (baseOwnDeltas.length > 0) {
  const change = ownDeltas.map((d, i) => d - (baseOwnDeltas[i] ?? 0));
  console.log(
    `own share, this less base (paired per round): median ${median(change).toFixed(0)} ns [${Math.min(...change).toFixed(0)}–${Math.max(...change).toFixed(0)}]`,
  );
  console.log(
    `base otel without SDK work: median ${median(baseOwnDeltas).toFixed(0)} ns [${Math.min(...baseOwnDeltas).toFixed(0)}–${Math.max(...baseOwnDeltas).toFixed(0)}]`,
  );
}
await meterProvider.shutdown();
await baseMeterProvider.shutdown();
