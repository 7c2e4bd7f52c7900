import { expect, it } from 'vitest';
import { main } from './index.js';

/** The value of the Prometheus sample whose name and labels include all of `parts`. */
function sample(metrics: string, ...parts: string[]): number | undefined {
  const line = metrics
    .split('\n')
    .find((l) => !l.startsWith('#') && parts.every((p) => l.includes(p)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

it('examples/otel-prometheus: retries, refusals and the circuit round trip reach /metrics', async () => {
  const lines: string[] = [];
  const { metrics } = await main({ port: 0, calls: 20, log: (l) => lines.push(l) });
  expect(lines[0]).toMatch(/^metrics at http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  expect(lines.slice(1).map((l) => l.split(' ')[0])).toEqual(['flaky', 'outage', 'recovered']);
  expect(lines[3]).toBe('recovered 20/20 answered');
  expect(sample(metrics, 'breakwater_retries_total{', 'error_type="UNAVAILABLE"')).toBeGreaterThan(
    0,
  );
  expect(
    sample(metrics, 'breakwater_refusals_total{', 'breakwater_reason="circuit-open"'),
  ).toBeGreaterThan(0);
  for (const [from, to] of [
    ['closed', 'open'],
    ['open', 'half-open'],
    ['half-open', 'closed'],
  ]) {
    expect(
      sample(
        metrics,
        'breakwater_circuit_transitions_total{',
        `breakwater_circuit_from="${from}"`,
        `breakwater_circuit_to="${to}"`,
      ),
    ).toBeGreaterThanOrEqual(1);
  }
  expect(sample(metrics, 'breakwater_circuit_state{', 'breakwater_circuit_state="closed"')).toBe(1);
  expect(
    sample(metrics, 'breakwater_call_duration_count{', 'breakwater_outcome="success"'),
  ).toBeGreaterThan(0);
  // Every metric the Grafana dashboard reads is one the exporter serves.
  const dashboard = JSON.stringify(await import('./grafana-dashboard.json'));
  const names = new Set(dashboard.match(/breakwater_[a-z_]+(?=\\?\{)/g));
  expect(names.size).toBeGreaterThanOrEqual(10);
  for (const name of names) {
    const base = name.replace(/_(bucket|count|sum|total)$/, '');
    if (/hedges|failovers|provider_health|deadlines/.test(base)) continue; // not produced by this load
    expect(metrics, name).toContain(`# TYPE ${base}`);
  }
});
