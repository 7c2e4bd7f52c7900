// `pnpm test` runs this first: the tests start real Chromium, redis-server and
// redis-cli (never mocks), and `pnpm check:packages` runs protoc. When one is
// missing, say exactly what to install and stop, before minutes of tests fail
// one by one with the same cause.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** What the test command needs beyond Node, and the Debian package that brings it. */
export const TOOLS = [
  {
    name: 'chromium',
    why: 'test/browser.test.ts runs core and the tRPC links in a real browser',
    debian: 'chromium',
    // The browser test reads the same variable.
    path: () => process.env.BREAKWATER_CHROMIUM ?? 'chromium',
    brew: 'brew install --cask chromium (then BREAKWATER_CHROMIUM=/Applications/Chromium.app/Contents/MacOS/Chromium)',
  },
  {
    name: 'redis-server',
    why: '@breakwater/redis tests start a real Redis',
    debian: 'redis-server',
    brew: 'brew install redis',
  },
  {
    name: 'redis-cli',
    why: '@breakwater/redis tests join a real Redis Cluster',
    debian: 'redis-tools',
    brew: 'brew install redis',
  },
  {
    name: 'protoc',
    why: 'pnpm check:packages generates ts-proto code for the nice-grpc snippet',
    debian: 'protobuf-compiler',
    brew: 'brew install protobuf',
    only: 'packages',
  },
];

/** True when `command` is an executable path or found on PATH. */
function available(command) {
  const executable = (file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(command);
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return dirs.some((dir) => executable(join(dir, command)));
}

/** The tools missing for `scope` (`test` or `packages`). */
export function missingTools(scope) {
  return TOOLS.filter((t) => (t.only ?? 'test') === scope).filter(
    (t) => !available(t.path?.() ?? t.name),
  );
}

/** The message that names each missing tool and the one command that installs them all. */
export function installMessage(missing) {
  const packages = [...new Set(missing.map((t) => t.debian))].join(' ');
  const brews = [...new Set(missing.map((t) => t.brew))];
  return [
    `Missing ${missing.map((t) => t.name).join(', ')}:`,
    ...missing.map((t) => `  ${t.name.padEnd(13)} ${t.why}`),
    '',
    'Install them (Debian/Ubuntu):',
    `  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages}`,
    'or on macOS:',
    ...brews.map((b) => `  ${b}`),
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const scope = process.argv[2] === '--packages' ? 'packages' : 'test';
  const missing = missingTools(scope);
  if (missing.length > 0) {
    process.stderr.write(installMessage(missing));
    process.exit(1);
  }
}
