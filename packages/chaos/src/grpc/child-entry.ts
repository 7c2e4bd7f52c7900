/**
 * Entry point of a chaos gRPC server running as a child process (see
 * `spawnGrpcChaosServer`). Reads its options as JSON from argv[2], prints
 * `{"event":"listening","port":N}` on stdout, then serves JSON-line commands
 * from stdin and exits when stdin closes (so an orphan never outlives its parent).
 * @internal
 */
import { createInterface } from 'node:readline';
import { startGrpcChaosServer } from './server.js';

interface Command {
  id: number;
  cmd: 'faults' | 'capacity' | 'capacity-stats' | 'health' | 'stats' | 'reset' | 'stop' | 'restart';
  [key: string]: unknown;
}

// No top-level await: the package also builds to CommonJS.
async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}');
  const server = await startGrpcChaosServer(options);
  const send = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  send({ event: 'listening', port: server.port, pid: process.pid });

  const lines = createInterface({ input: process.stdin });
  lines.on('line', async (line) => {
    let command: Command;
    try {
      command = JSON.parse(line) as Command;
    } catch {
      return;
    }
    try {
      switch (command.cmd) {
        case 'faults':
          server.setFaults(command.faults as never);
          // In the same step, so the server says SERVING the moment it answers again.
          if (command.health !== undefined) server.setHealth(command.health as never);
          break;
        case 'capacity':
          server.setCapacity((command.capacity ?? undefined) as never);
          break;
        case 'capacity-stats':
          send({ id: command.id, ok: true, stats: server.capacityStats() });
          return;
        case 'health':
          server.setHealth(command.status as never, command.service as string | undefined);
          break;
        case 'reset':
          server.reset();
          break;
        case 'stop':
          await server.stop();
          break;
        case 'restart':
          await server.restart();
          break;
        case 'stats':
          send({ id: command.id, ok: true, total: server.total(), observed: server.observed });
          return;
      }
      send({ id: command.id, ok: true });
    } catch (error) {
      send({ id: command.id, ok: false, error: String(error) });
    }
  });
  lines.on('close', () => {
    void server.close().then(() => process.exit(0));
  });
}

void main();
