import type { Telemetry } from '@breakwater/core';
import { type Attributes, context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { METRICS, type OtelTelemetryOptions, otelTelemetry } from '../src/index.js';

// The caller's active span is found through the context manager, as in an application.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** A metric reader that keeps nothing: each `collect()` reads the SDK's current state. */
class InMemoryReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

type Point = DataPoint<number | Histogram>;

/** The real OpenTelemetry SDK, metrics and traces in memory, and an `otelTelemetry` writing to it. */
export function otelSdk(
  options: Omit<OtelTelemetryOptions, 'meterProvider' | 'tracerProvider'> = {},
) {
  const reader = new InMemoryReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const telemetry = otelTelemetry({ meterProvider, tracerProvider, ...options });

  /** Every data point of metric `name` (after a collection), by name. */
  async function collect(): Promise<Map<string, Point[]>> {
    const { resourceMetrics } = await reader.collect();
    const byName = new Map<string, Point[]>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        byName.set(metric.descriptor.name, metric.dataPoints as Point[]);
      }
    }
    return byName;
  }

  const matches = (attributes: Attributes, filter: Attributes) =>
    Object.entries(filter).every(([k, v]) => attributes[k] === v);

  const tracer = tracerProvider.getTracer('test');
  return {
    telemetry,
    tracer,
    collect,
    /** Runs `fn` under an active span named `caller` (the application's span), ended after it. */
    inCallerSpan<T>(fn: () => Promise<T>): Promise<T> {
      return tracer.startActiveSpan('caller', async (span) => {
        try {
          return await fn();
        } finally {
          span.end();
        }
      });
    },
    /** Sum of counter `name` over the points whose attributes include `filter`. */
    async sum(name: string, filter: Attributes = {}): Promise<number> {
      const points = (await collect()).get(name) ?? [];
      let total = 0;
      for (const p of points) if (matches(p.attributes, filter)) total += p.value as number;
      return total;
    },
    /** Count and sum of histogram `name` over the points whose attributes include `filter`. */
    async histogram(
      name: string,
      filter: Attributes = {},
    ): Promise<{ count: number; sum: number }> {
      const points = (await collect()).get(name) ?? [];
      let count = 0;
      let sum = 0;
      for (const p of points) {
        if (!matches(p.attributes, filter)) continue;
        count += (p.value as Histogram).count;
        sum += (p.value as Histogram).sum ?? 0;
      }
      return { count, sum };
    },
    /** The value of gauge `name` at the point whose attributes include `filter`. */
    async gauge(name: string, filter: Attributes): Promise<number | undefined> {
      const points = (await collect()).get(name) ?? [];
      return points.find((p) => matches(p.attributes, filter))?.value as number | undefined;
    },
    spans(): ReadableSpan[] {
      return exporter.getFinishedSpans();
    },
  };
}

/** Every attribute value written anywhere (metric points, spans, span events), as strings. */
export async function everyAttributeValue(sdk: ReturnType<typeof otelSdk>): Promise<string[]> {
  const values: string[] = [];
  const add = (attributes: Attributes | undefined) => {
    for (const [k, v] of Object.entries(attributes ?? {})) values.push(`${k}=${String(v)}`);
  };
  for (const points of (await sdk.collect()).values()) for (const p of points) add(p.attributes);
  for (const span of sdk.spans()) {
    add(span.attributes);
    values.push(`span=${span.name}`);
    for (const event of span.events) {
      values.push(`event=${event.name}`);
      add(event.attributes);
    }
  }
  return values;
}

/** What the metrics say of calls refused for `reason`: refusals, deadlines exceeded, attempts, and the attempts histogram of refused calls. */
export async function refusedCalls(sdk: ReturnType<typeof otelSdk>, reason: string) {
  return {
    refusals: await sdk.sum(METRICS.refusals, { 'breakwater.reason': reason }),
    deadlinesExceeded: await sdk.sum(METRICS.deadlinesExceeded),
    attempts: await sdk.sum(METRICS.attempts),
    callAttempts: await sdk.histogram(METRICS.callAttempts, { 'breakwater.outcome': 'refused' }),
  };
}

/** A fixed backoff: 5 ms, 10 ms, ... without jitter. */
export const fast = { baseDelayMs: 5, strategy: 'linear', jitter: 'none' } as const;

/** Every part of an adapter's standard stack but retries off: a test turns on what it is about. */
export const OFF = {
  timeoutMs: false,
  attemptTimeoutMs: false,
  budget: false,
  circuit: false,
  concurrency: false,
} as const;

/** `telemetry`, counting what it is told once per router (targets) and per breaker (circuits). */
export function counting(telemetry: Telemetry) {
  const told = { providers: 0, circuits: [] as Array<string | undefined> };
  const counted: Telemetry = {
    unguarded: true,
    startCall: (target, now) => telemetry.startCall(target, now),
    circuit(breaker, target) {
      told.circuits.push(target.name);
      telemetry.circuit?.(breaker, target);
    },
    providers(ids, healthy, target) {
      told.providers++;
      telemetry.providers?.(ids, healthy, target);
    },
  };
  return { told, counted };
}
