// A chaos tRPC server in its own process (no faults), so a throughput benchmark's client
// does not share its event loop with the server. Prints {"port":N} once listening and
// exits when its stdin closes (the parent died or closed it).
import { createChaosTrpcServer } from '@breakwater/chaos';

const server = await createChaosTrpcServer({ name: 'bench-trpc' });
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void server.close().then(() => process.exit(0));
});
