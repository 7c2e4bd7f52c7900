// Round trip: one service config, given to grpc-js ('grpc.service_config' on the nice-grpc
// channel, grpc-js's own retries on) and to Breakwater
// (resilienceMiddleware(fromServiceConfig(json)) on a channel with grpc-js's retries off),
// must look the same to a real server: attempts per method, the gaps between them, each
// attempt's deadline and the hedging delay. The table is the grpc-js adapter's.
import { fromServiceConfig } from '@breakwater/core/grpc';
import { credentials, type ServiceDefinition, status } from '@grpc/grpc-js';
import { ClientError, createChannel, createClientFactory, waitForChannelReady } from 'nice-grpc';
import { CART, cleanup, roundTrip } from '../../grpc-js/test/service-config-table.js';
import { resilienceMiddleware } from '../src/index.js';

/** grpc-js's retries off, as `disableGrpcRetries` of `@breakwater/grpc-js` sets them. */
const NO_GRPC_RETRIES = { 'grpc.enable_retries': 0 };

roundTrip(
  'fromServiceConfig with resilienceMiddleware: grpc-js and Breakwater, seen from a real server',
  async (client, json, address) => {
    const channel = createChannel(
      address,
      credentials.createInsecure(),
      client === 'grpc-js' ? { 'grpc.service_config': json } : NO_GRPC_RETRIES,
    );
    cleanup.push(() => channel.close());
    const factory =
      client === 'grpc-js'
        ? createClientFactory()
        : createClientFactory().use(resilienceMiddleware(fromServiceConfig(json)));
    // The untyped grpc-js definition: its methods take and return bytes.
    const stub = factory.create(CART as unknown as ServiceDefinition, channel) as unknown as Record<
      keyof typeof CART,
      (request: Buffer) => Promise<Buffer>
    >;
    // Connect first, so that no attempt pays for the connection.
    await waitForChannelReady(channel, new Date(Date.now() + 5_000));
    return async (method) => {
      try {
        await stub[method](Buffer.from('x'));
        return status.OK;
      } catch (error) {
        if (error instanceof ClientError) return error.code;
        throw error;
      }
    };
  },
);
