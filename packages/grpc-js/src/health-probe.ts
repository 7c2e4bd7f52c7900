import type { Probe } from '@breakwater/core';
import type { ProbeWatch } from '@breakwater/core/health';
import { checkOptions, describeValue, keysOf, optionTypeError } from '@breakwater/core/internal';
import {
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientReadableStream,
  credentials as grpcCredentials,
  makeClientConstructor,
  type ServiceError,
  status as Status,
} from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { eagerReconnect } from './channel-options.js';

/** Options of {@link createGrpcHealthProbe}. */
export interface GrpcHealthProbeOptions {
  /** Service name sent in the check; `""` asks about the whole server. Defaults to `""`. */
  service?: string;
  /** Channel credentials. Defaults to insecure. */
  credentials?: ChannelCredentials;
  /** Channel options of the probe clients, over `eagerReconnect`. Defaults to none. */
  channelOptions?: ChannelOptions;
  /**
   * Watch `grpc.health.v1.Health/Watch` (server streaming: each status change
   * is pushed) instead of polling `Check`; a target answering `UNIMPLEMENTED`
   * is polled with `Check`. An open stream keeps the process alive until the
   * checker running the probe stops. Defaults to true.
   */
  watch?: boolean;
}

/** Keys of {@link GrpcHealthProbeOptions}. @internal */
export const GRPC_HEALTH_PROBE_KEYS = keysOf<GrpcHealthProbeOptions>()([
  'service',
  'credentials',
  'channelOptions',
  'watch',
]);

/** A probe that keeps one health client per target; `close()` closes them. */
export interface GrpcHealthProbe extends Probe<string> {
  /** Closes every client the probe opened. */
  close(): void;
}

type HealthClient = Client & {
  Check(
    request: { service: string },
    options: { deadline?: number },
    callback: (error: ServiceError | null, response?: { status: unknown }) => void,
  ): { cancel(): void };
  Watch(request: { service: string }): ClientReadableStream<{ status: unknown }>;
};

// grpc-health-check loads the proto with default enum handling: numbers.
const SERVING = 1;
const STATUS_NAMES: Record<number, string> = {
  0: 'UNKNOWN',
  1: 'SERVING',
  2: 'NOT_SERVING',
  3: 'SERVICE_UNKNOWN',
};

/** A health response's status as a verdict (the proto loads enums as strings or numbers). */
function verdictOf(status: unknown): { healthy: boolean; reason: string } {
  const name =
    typeof status === 'number' ? (STATUS_NAMES[status] ?? String(status)) : String(status);
  return { healthy: status === SERVING || status === 'SERVING', reason: name };
}

/**
 * A core `Probe` over `grpc.health.v1.Health/Check`: `SERVING` is healthy,
 * any other status or a failed call is unhealthy. The target is a grpc-js
 * address (`host:port`); the check is cancelled when the probe's signal aborts.
 *
 * With `watch` (the default) the probe also watches: a health checker keeps
 * one `Health/Watch` stream per target, and each status the server pushes is
 * recorded at once (a router half-opens the target's circuit on `SERVING`
 * then, not at the next poll). A stream that fails is a failure and is
 * restarted by the checker after a backoff; a server without `Watch`
 * (`UNIMPLEMENTED`) is polled with `Check` every `intervalMs`.
 * @example
 * createHealthChecker({ registry, targets: { a: 'localhost:50051' }, probe: createGrpcHealthProbe(), intervalMs: 1000 })
 */
export function createGrpcHealthProbe(options: GrpcHealthProbeOptions = {}): GrpcHealthProbe {
  checkOptions('createGrpcHealthProbe', options, GRPC_HEALTH_PROBE_KEYS);
  const service = options.service ?? '';
  if (options.watch !== undefined && typeof options.watch !== 'boolean') {
    throw optionTypeError(
      'watch',
      `must be a boolean, got ${describeValue(options.watch)}`,
      'createGrpcHealthProbe',
    );
  }
  const creds = options.credentials ?? grpcCredentials.createInsecure();
  const HealthClient = makeClientConstructor(healthService as never, 'grpc.health.v1.Health');
  const clients = new Map<string, HealthClient>();
  const clientFor = (target: string): HealthClient => {
    let client = clients.get(target);
    if (client === undefined) {
      client = new HealthClient(target, creds, {
        ...eagerReconnect,
        ...options.channelOptions,
      }) as unknown as HealthClient;
      clients.set(target, client);
    }
    return client;
  };
  const probe = (target: string, { signal }: { signal: AbortSignal }) =>
    new Promise<{ healthy: boolean; reason: string }>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const call = clientFor(target).Check({ service }, {}, (error, response) => {
        signal.removeEventListener('abort', onAbort);
        if (error) {
          reject(error);
          return;
        }
        resolve(verdictOf(response?.status));
      });
      const onAbort = () => call.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  const watch: ProbeWatch<string> = (target, { signal, report }) =>
    new Promise<'unsupported' | undefined>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const call = clientFor(target).Watch({ service });
      const done = () => {
        signal.removeEventListener('abort', onAbort);
        call.removeAllListeners();
        // A late error from the cancelled stream must not be unhandled.
        call.on('error', () => {});
      };
      const onAbort = () => {
        done();
        call.cancel();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      call.on('data', (response: { status: unknown }) => {
        const v = verdictOf(response.status);
        report(v.healthy, v.reason);
      });
      call.on('error', (error: ServiceError) => {
        done();
        if (error.code === Status.UNIMPLEMENTED) resolve('unsupported');
        else reject(error);
      });
      call.on('end', () => {
        done();
        resolve(undefined);
      });
    });
  return Object.assign(probe, {
    ...(options.watch === false ? {} : { watch }),
    close() {
      for (const client of clients.values()) client.close();
      clients.clear();
    },
  });
}

/** The default {@link createGrpcHealthProbe} (overall server health, insecure channels). */
export const grpcHealthProbe: GrpcHealthProbe = createGrpcHealthProbe();
