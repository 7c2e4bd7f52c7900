import type { Probe } from '@breakwater/core';
import { checkOptions, type KnownKeys } from '@breakwater/core/internal';
import {
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  credentials as grpcCredentials,
  makeClientConstructor,
  type ServiceError,
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
}

/** Keys of {@link GrpcHealthProbeOptions}. @internal */
export const GRPC_HEALTH_PROBE_KEYS = {
  service: true,
  credentials: true,
  channelOptions: true,
} as const satisfies KnownKeys<GrpcHealthProbeOptions>;

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
};

// grpc-health-check loads the proto with default enum handling: numbers.
const SERVING = 1;
const STATUS_NAMES: Record<number, string> = {
  0: 'UNKNOWN',
  1: 'SERVING',
  2: 'NOT_SERVING',
  3: 'SERVICE_UNKNOWN',
};

/**
 * A core `Probe` over `grpc.health.v1.Health/Check`: `SERVING` is healthy,
 * any other status or a failed call is unhealthy. The target is a grpc-js
 * address (`host:port`); the check is cancelled when the probe's signal aborts.
 * @example
 * createHealthChecker({ registry, targets: { a: 'localhost:50051' }, probe: createGrpcHealthProbe(), intervalMs: 1000 })
 */
export function createGrpcHealthProbe(options: GrpcHealthProbeOptions = {}): GrpcHealthProbe {
  checkOptions('createGrpcHealthProbe', options, GRPC_HEALTH_PROBE_KEYS);
  const service = options.service ?? '';
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
        const status = response?.status;
        const name =
          typeof status === 'number' ? (STATUS_NAMES[status] ?? String(status)) : String(status);
        resolve({ healthy: status === SERVING || status === 'SERVING', reason: name });
      });
      const onAbort = () => call.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  return Object.assign(probe, {
    close() {
      for (const client of clients.values()) client.close();
      clients.clear();
    },
  });
}

/** The default {@link createGrpcHealthProbe} (overall server health, insecure channels). */
export const grpcHealthProbe: GrpcHealthProbe = createGrpcHealthProbe();
