import type { SafeTelemetry, TelemetryTarget } from '../attempts/telemetry.js';
import type { GrpcCircuits } from './circuits.js';

/**
 * The telemetry targets of a gRPC adapter's calls, one frozen object per
 * method path (`/package.Service/Method` → `rpc.service`, `rpc.method`),
 * built on first use; each method's circuit is handed to the telemetry then.
 * @internal
 */
export function grpcTelemetryTargets(
  telemetry: SafeTelemetry,
  circuits: GrpcCircuits | undefined,
): (path: string) => TelemetryTarget {
  const targets = new Map<string, TelemetryTarget>();
  return (path) => {
    let target = targets.get(path);
    if (target === undefined) {
      const slash = path.lastIndexOf('/');
      target = Object.freeze({
        system: 'grpc',
        service: path.slice(1, slash),
        method: path.slice(slash + 1),
      });
      targets.set(path, target);
      if (circuits !== undefined) telemetry.circuit(circuits.circuitFor(path), target);
    }
    return target;
  };
}
