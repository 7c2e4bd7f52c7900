/**
 * otel-cost: what `telemetry` costs on protect's success path, interleaved in
 * one process — this core without `telemetry`, with `otelTelemetry()` on a
 * real OpenTelemetry SDK MeterProvider (no active span, so only metrics), and
 * with `otelTelemetry()` on the API's no-op meter (the package's own share,
 * no SDK work). `--otel-rounds`, `--otel-calls` and `--own-only` (no SDK
 * variants) set the run.
 */
import { median } from '@breakwater/chaos';
import { protect } from '@breakwater/core';
import { otelTelemetry } from '@breakwater/otel';
import { type MeterProvider as ApiMeterProvider, type Meter, metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { runInterleaved } from '../harness/interleave.js';
import { batchCost, bytesPerCall, type Call, calibrate } from '../harness/micro.js';
import { otelCostReport, otelCostSettings, OTEL_VARIANTS as V } from '../harness/otel-cost.js';
import { fmt, type Suite } from '../harness/report.js';

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

const STACK = {
  retry: { attempts: 3 },
  attemptTimeoutMs: 1_000,
  circuit: { failureThreshold: 5, openDurationMs: 30_000 },
  concurrency: { limit: 100 },
} as const;
const op = async () => 1;

export const otelCostSuite: Suite = {
  name: 'otel-cost',
  title: '@breakwater/otel: cost of telemetry on the success path',
  checkSettings: (quick) => {
    otelCostSettings(quick);
  },
  async run({ quick }) {
    const s = otelCostSettings(quick);
    const sdkProvider = s.withSdk ? new MeterProvider({ readers: [new Reader()] }) : undefined;
    const variants: Array<{ name: string; call: Call }> = [];
    const off = protect(STACK);
    variants.push({ name: V.off, call: () => off(op) });
    if (sdkProvider) {
      const on = protect({ ...STACK, telemetry: otelTelemetry({ meterProvider: sdkProvider }) });
      variants.push({ name: V.sdk, call: () => on(op) });
    }
    const noop = protect({
      ...STACK,
      telemetry: otelTelemetry({ meterProvider: new NoopMeterProvider() }),
    });
    variants.push({ name: V.noop, call: () => noop(op) });

    // One batch size for every variant, so each round's differences compare equal work.
    const n = s.calls ?? (await calibrate(variants[0]?.call as Call, quick ? 5 : 20));
    const fns: Record<string, () => Promise<number>> = {};
    for (const v of variants) {
      // An untimed half batch first, as in the micro suite.
      fns[v.name] = async () => {
        await batchCost(v.call, n >> 1);
        return (await batchCost(v.call, n)).cpuNs;
      };
    }
    const rounds = await runInterleaved(fns, s.rounds);
    const bytes: Record<string, number | undefined> = {};
    for (const v of variants) bytes[v.name] = await bytesPerCall(v.call);
    await sdkProvider?.shutdown();
    const data = { rounds, bytes, calls: n };
    console.log(
      `  otel-cost: ${variants.map((v) => `${v.name} ${fmt(median(rounds[v.name] as number[]), 0)} ns`).join(', ')}`,
    );
    return {
      ...otelCostReport(data),
      notes: [
        `\`protect\` with retry (3 attempts), \`attemptTimeoutMs\` 1000, a circuit (5 / 30 s) and concurrency 100 around \`async () => 1\`; ${s.rounds} interleaved rounds (the order rotates every round) of ${n} sequential calls per variant after an untimed half batch; CPU ns per call (\`process.cpuUsage\`), median and min–max over rounds. "Added per call" subtracts two variants round by round, then takes the median. bytes/call as in the micro suite (\`--expose-gc\`, largest of 5 batches of 2 000).`,
        `The SDK variant records on an OpenTelemetry SDK \`MeterProvider\` (no active span: metrics only); the no-op meter variant makes the same calls into the API's no-op meter, so it is the package's own share without SDK work.${s.withSdk ? '' : ' This run left the SDK variants out (`--own-only`).'}`,
      ],
      data,
    };
  },
};
