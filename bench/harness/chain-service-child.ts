// One service of the `chain` suite in its own process (suites/chain/service.ts), built from
// the JSON `ServiceSpec` in argv[2]. Prints {"address":…} once listening, then answers
// {"id":N,"op":"reset","mode":…} (fresh client, records cleared, D answers by `mode`) and
// {"id":N,"op":"records"} (what the server saw), {"id":N,"op":"activity"} (calls received, calls
// still running), and exits when its stdin closes (the
// parent closed it or died).
import { breakwaterBindings } from '../suites/chain/bindings.js';
import type { LeafMode } from '../suites/chain/hop.js';
import { type ServiceSpec, startService } from '../suites/chain/service.js';
import { serveCommands } from './command-loop.js';

interface Command {
  id: number;
  op: 'reset' | 'records' | 'activity';
  mode?: LeafMode;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as ServiceSpec;
const service = await startService(spec, breakwaterBindings);

async function handle(command: Command): Promise<unknown> {
  if (command.op === 'reset') {
    service.reset(command.mode ?? 'ok');
    return null;
  }
  const records = service.records();
  if (command.op === 'records') return records;
  const running = records.filter((r) => r.endedAt === undefined && r.abortedAt === undefined);
  return { received: records.length, running: running.length };
}

serveCommands({ address: service.address }, handle, () => {
  void service.close().finally(() => process.exit(0));
});
