// Round trip: one service config, given to grpc-js ('grpc.service_config', its own
// retries on) and to Breakwater (resilienceInterceptor(fromServiceConfig(json)),
// grpc-js's retries off), must look the same to a real server: the attempts, the
// gaps between them, each attempt's deadline and the hedging delay.
import { fromServiceConfig } from '@breakwater/core/grpc';
import {
  type Client,
  credentials,
  makeGenericClientConstructor,
  type ServiceDefinition,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { disableGrpcRetries, resilienceInterceptor } from '../src/index.js';
import { CART, cleanup, roundTrip } from './service-config-table.js';

type CartClient = Client &
  Record<
    keyof typeof CART,
    (request: Buffer, callback: (error: ServiceError | null) => void) => void
  >;
const Cart = makeGenericClientConstructor(CART as unknown as ServiceDefinition, 'Cart');

roundTrip(
  'fromServiceConfig round trip: grpc-js and Breakwater, seen from a real server',
  async (client, json, address) => {
    const options =
      client === 'grpc-js'
        ? { 'grpc.service_config': json }
        : { ...disableGrpcRetries, interceptors: [resilienceInterceptor(fromServiceConfig(json))] };
    const stub = new Cart(address, credentials.createInsecure(), options) as unknown as CartClient;
    cleanup.push(() => stub.close());
    // Connect first, so that no attempt pays for the connection.
    await new Promise<void>((resolve, reject) =>
      stub.waitForReady(Date.now() + 5_000, (error) => (error ? reject(error) : resolve())),
    );
    return (method) =>
      new Promise<number>((resolve) =>
        stub[method](Buffer.from('x'), (error) => resolve(error?.code ?? status.OK)),
      );
  },
);
