/**
 * A chaos tRPC server in its own process (forked by `trpc-child.ts`), so the
 * demo's clients and this server do not share an event loop and a kill is a
 * real crash. Options come as JSON in argv[2]; commands arrive over IPC.
 */
import { createChaosTrpcServer, type TrpcFaultPlan } from '@breakwater/chaos';

type Command = { id: number; cmd: 'faults'; faults: TrpcFaultPlan } | { id: number; cmd: 'stats' };

const options = JSON.parse(process.argv[2] ?? '{}');
const server = await createChaosTrpcServer(options);
const send = (message: unknown) => process.send?.(message);
send({ event: 'listening', port: server.port });

process.on('message', (command: Command) => {
  if (command.cmd === 'faults') {
    server.setFaults(command.faults);
    send({ id: command.id, ok: true });
  } else if (command.cmd === 'stats') {
    send({ id: command.id, ok: true, attempts: server.stats().attempts });
  }
});
// The parent is gone: do not outlive it.
process.on('disconnect', () => {
  void server.close().then(() => process.exit(0));
});
