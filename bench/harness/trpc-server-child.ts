// A chaos tRPC server in its own process, so neither a throughput benchmark's client nor a
// fault run's ten clients share an event loop with the server (a stalled in-process server
// made every client's deadline expire). Prints {"port":N} once listening, then answers
// line-delimited JSON commands on stdin — {"id":1,"op":"setFaults","plan":{…}},
// {"id":2,"op":"attempts"}, {"id":3,"op":"stop"|"start"} — with {"id":1,"result":…} lines,
// and exits when its stdin closes (the parent died or closed it).
import { createChaosTrpcServer, type TrpcFaultPlan } from '@breakwater/chaos';
import { serveCommands } from './command-loop.js';

const seed = Number(process.argv[2] ?? '7');
const name = process.argv[3] ?? 'bench-trpc';
const server = await createChaosTrpcServer({ name, seed });

interface Command {
  id: number;
  op: 'setFaults' | 'attempts' | 'stop' | 'start';
  plan?: TrpcFaultPlan;
}

async function handle(command: Command): Promise<unknown> {
  switch (command.op) {
    case 'setFaults':
      server.setFaults(command.plan ?? {});
      return null;
    case 'attempts':
      return server.stats().attempts;
    case 'stop':
      await server.stop();
      return null;
    case 'start':
      await server.start();
      return null;
  }
}

serveCommands({ port: server.port }, handle, () => {
  void server.close().then(() => process.exit(0));
});
