import { createInterface } from 'node:readline';

/**
 * The child side of `spawnCommandChild`: prints `ready` as one JSON line,
 * then answers each `{"id":N,…}` line on stdin with `{"id":N,"result":…}`
 * (or `"error"`), and calls `onClose` when stdin closes (the parent closed it
 * or died).
 */
export function serveCommands<Command extends { id: number }>(
  ready: unknown,
  handle: (command: Command) => Promise<unknown>,
  onClose: () => void,
): void {
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const command = JSON.parse(line) as Command;
    handle(command).then(
      (result) => process.stdout.write(`${JSON.stringify({ id: command.id, result })}\n`),
      (error: unknown) =>
        process.stdout.write(`${JSON.stringify({ id: command.id, error: String(error) })}\n`),
    );
  });
  lines.on('close', onClose);
}
