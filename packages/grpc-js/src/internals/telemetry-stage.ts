import type { TelemetryRefusal, TelemetryTarget } from '@breakwater/core';
import { type GrpcCircuits, GrpcStatus } from '@breakwater/core/grpc';
import type { SafeCallTelemetry, SafeTelemetry } from '@breakwater/core/internal';
import { type InterceptorOptions, status as Status, type StatusObject } from '@grpc/grpc-js';
import { type CallObserver, ObservedCall } from './observed-call.js';
import { RefusedCall } from './refused-call.js';
import type { Stage } from './stage.js';
import { breakwaterCause } from './status.js';

const SCOPE = Symbol('breakwater.telemetry');

/** Status names by code, for `error.type`. */
const STATUS_NAMES: readonly string[] = Object.keys(GrpcStatus);

/** The bounded name of gRPC status `code`. @internal */
export function statusName(code: number): string {
  return STATUS_NAMES[code] ?? String(code);
}

/** Refusals by the name of the Breakwater error behind a refused call's status. */
const REFUSALS: Readonly<Record<string, TelemetryRefusal>> = {
  CircuitOpenError: 'circuit-open',
  RateLimitError: 'rate-limited',
  QueueFullError: 'queue-full',
};

/** One call's telemetry, handed to the attempt stage through the call's options. @internal */
export class TelemetryScope {
  /** The attempt stage runs this call's attempts (and reports them). */
  driven = false;
  /** Attempts started by the attempt stage. */
  attempts = 0;
  constructor(readonly tel: SafeCallTelemetry) {}
}

/** The telemetry scope of a call, when the interceptor has the `telemetry` option. @internal */
export function telemetryScopeOf(options: InterceptorOptions): TelemetryScope | undefined {
  return (options as { [SCOPE]?: TelemetryScope })[SCOPE];
}

const observer: CallObserver<TelemetryScope> = {
  settle(scope, _permit, _startedAt, status: StatusObject, cancelledByCaller) {
    const { tel } = scope;
    const refusal = REFUSALS[breakwaterCause(status)?.name ?? ''];
    if (refusal !== undefined) {
      tel.refused(refusal);
      tel.end('refused', 0, undefined);
      return;
    }
    const ok = status.code === Status.OK;
    const type = ok ? undefined : statusName(status.code);
    if (!scope.driven) tel.attemptEnd(1, ok ? 'success' : 'failure', type);
    if (status.code === Status.DEADLINE_EXCEEDED) tel.deadlineExceeded('call');
    tel.end(
      ok ? 'success' : cancelledByCaller ? 'cancelled' : 'failure',
      scope.driven ? scope.attempts : 1,
      type,
    );
  },
};

/**
 * The outermost stage when `telemetry` is on: starts each call's telemetry
 * (`rpc.system`, `rpc.service`, `rpc.method`, once per method), hands it to
 * the attempt stage, and reports the refusal or the end with the final
 * status. Without the option the stage is not in the stack.
 * @internal
 */
export function telemetryStage(
  telemetry: SafeTelemetry,
  circuits: GrpcCircuits | undefined,
): Stage {
  const targets = new Map<string, TelemetryTarget>();
  const targetOf = (path: string): TelemetryTarget => {
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
  return {
    intercept(options, chain, index, final) {
      const tel = telemetry.startCall(targetOf(options.method_definition.path));
      if (tel === undefined) return chain.next(options, index, final);
      const scope = new TelemetryScope(tel);
      // Not a spread: see the deadline stage.
      const inner = chain.next(Object.assign({}, options, { [SCOPE]: scope }), index, final);
      // A call refused at once (circuit, rate limit) never started an attempt.
      if (!scope.driven && !(inner instanceof RefusedCall)) tel.attemptStart(1);
      return new ObservedCall(inner, observer, scope, -1, 0);
    },
  };
}
