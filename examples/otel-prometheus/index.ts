/**
 * A grpc-js client through `resilienceInterceptor({ telemetry: otelTelemetry() })`,
 * exported to Prometheus (`/metrics`) while a chaos server injects faults:
 * a flaky phase (30% UNAVAILABLE: retries), an outage (the circuit opens and
 * refuses), a recovery (the circuit closes). `pnpm start` repeats the phases
 * until Ctrl-C; point Prometheus at http://127.0.0.1:9464/metrics and import
 * `grafana-dashboard.json` into Grafana.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEchoClient, ECHO_METHODS, echoUnary, startGrpcChaosServer } from '@breakwater/chaos';
import { disableGrpcRetries, resilienceInterceptor } from '@breakwater/grpc-js';
import { otelTelemetry } from '@breakwater/otel';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

const UNAVAILABLE = 14;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ExampleOptions {
  /** Port of the `/metrics` endpoint (0: any free one). Defaults to 9464, Prometheus's usual. */
  port?: number;
  /** Times the three phases run. Defaults to 1. */
  rounds?: number;
  /** Calls per phase. Defaults to 40. */
  calls?: number;
  log?: (line: string) => void;
}

/** Runs the phases, then returns the `/metrics` text (and closes everything unless `rounds` is endless). */
export async function main(
  options: ExampleOptions = {},
): Promise<{ metrics: string; url: string }> {
  const { port = 9464, rounds = 1, calls = 40, log = console.log } = options;
  const server = await startGrpcChaosServer({ seed: 7 });
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const http = createServer((request, response) =>
    exporter.getMetricsRequestHandler(request, response),
  );
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/metrics`;
  log(`metrics at ${url}`);

  const client = createEchoClient(server.address, {
    ...disableGrpcRetries,
    interceptors: [
      resilienceInterceptor({
        idempotent: [ECHO_METHODS.unary],
        retry: { attempts: 3, backoff: { baseDelayMs: 5, maxDelayMs: 20 } },
        circuit: { failureThreshold: 5, failureSpanMs: 0, openDurationMs: 200 },
        // The one line that turns telemetry on.
        telemetry: otelTelemetry({ meterProvider }),
      }),
    ],
  });
  try {
    for (let round = 0; round < rounds; round++) {
      const phase = async (name: string, rules: Parameters<typeof server.setFaults>[0]) => {
        server.setFaults(rules);
        let ok = 0;
        for (let i = 0; i < calls; i++) if ((await echoUnary(client, { message: 'hi' })).ok) ok++;
        log(`${name.padEnd(9)} ${ok}/${calls} answered`);
      };
      await phase('flaky', [{ methods: ['Unary'], rate: 0.3, status: UNAVAILABLE }]);
      await phase('outage', [{ methods: ['Unary'], status: UNAVAILABLE }]);
      await sleep(250); // the circuit's open time: the next call is its probe
      await phase('recovered', []);
    }
    const metrics = await (await fetch(url)).text();
    return { metrics, url };
  } finally {
    client.close();
    await server.close();
    await meterProvider.shutdown();
    await new Promise((resolve) => http.close(resolve));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { metrics } = await main({ rounds: Number(process.env.ROUNDS ?? 1_000_000) });
  for (const line of metrics.split('\n')) if (line.startsWith('breakwater_')) console.log(line);
}
