// Packaging test: what a user gets from npm. Packs every publishable package
// with `pnpm pack` (after `pnpm build`), checks each tarball's contents, then
// installs the tarballs with npm into fresh projects outside the workspace:
//
//  - minimal-<package>: one package's tarball alone (with the tarballs of the
//    Breakwater packages it depends on); npm adds the required peers itself.
//    Every export (import and require) must load, and the browser-safe entries
//    must bundle with esbuild --platform=browser. One project per package, so
//    another package's dependencies cannot hide an undeclared import.
//  - oldest / newest: the tarballs with the oldest supported and the newest
//    published framework versions. The consumer in scripts/package-check is
//    type-checked with `tsc --strict` as ESM (node16), CommonJS (node16) and
//    bundler resolution, then run in all three forms (the bundler form through
//    an esbuild bundle): one real client per adapter against a real server.
//  - first-contact: what a newcomer does with the root README. The grpc-js
//    snippet between its `first-contact:grpc-js` markers is copied verbatim
//    into a fresh project next to its own hello.proto (a method marked
//    IDEMPOTENT), type-checked with `tsc --strict` and run against a plain
//    grpc-js server that fails the first attempt: the server must see two.
//    The nice-grpc snippets are checked the same way: the ts-proto one with
//    generated/hello.ts made in the project by protoc (Debian's
//    protobuf-compiler) and the ts-proto plugin from npm, the proto-loader
//    one with the proto as it is.
//    The tRPC snippet is type-checked the same way (bundler resolution) against
//    a router of its own.
//  - redis: @breakwater/redis with its peers (core, ioredis) alone; the
//    consumer in scripts/package-check/redis.ts is type-checked with
//    `tsc --strict` (ESM, CommonJS, bundler) and run in all three forms against
//    a real redis-server (Debian's package) on a free loopback port.
//
// Any npm warning (peer conflicts, ERESOLVE) fails the check.
// Usage: node scripts/check-packages.mjs [--root <repo>] [--keep] [--only first-contact|redis]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const rootArg = args.indexOf('--root');
const root = rootArg >= 0 ? resolve(args[rootArg + 1]) : resolve(here, '..');
const keep = args.includes('--keep');
const onlyArg = args.indexOf('--only');
/** `--only <case>` packs every package but runs only that case (the README's, or redis). */
const only = onlyArg >= 0 ? args[onlyArg + 1] : undefined;
if (only !== undefined && only !== 'first-contact' && only !== 'redis') {
  console.error(`--only: unknown case ${JSON.stringify(only)} (known: first-contact, redis)`);
  process.exit(2);
}
const fixtures = join(here, 'package-check');

const PACKAGES = ['core', 'grpc-js', 'nice-grpc', 'trpc', 'chaos', 'otel', 'redis'];
/** Entries that need an optional peer the minimal project does not install. */
const OPTIONAL_PEER_ENTRIES = new Set(['@breakwater/grpc-js/health']);
/** Entries documented as browser-safe. */
const BROWSER_ENTRIES = ['@breakwater/core', '@breakwater/trpc'];
// Tool versions from this script's own repo (--root may point at an older tree).
const rootPkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
const TOOLS = {
  typescript: rootPkg.devDependencies.typescript,
  esbuild: rootPkg.devDependencies.esbuild,
  '@types/node': rootPkg.devDependencies['@types/node'],
};
/** Framework versions per matrix row: the oldest each peer range admits, and the newest. */
const MATRIX = {
  oldest: {
    '@grpc/grpc-js': '1.10.0',
    '@grpc/proto-loader': '0.7.13',
    'grpc-health-check': '2.0.0',
    'nice-grpc': '2.0.0',
    'nice-grpc-common': '2.0.0',
    '@trpc/client': '11.0.0',
    '@trpc/server': '11.0.0',
  },
  newest: {
    '@grpc/grpc-js': 'latest',
    '@grpc/proto-loader': 'latest',
    'grpc-health-check': 'latest',
    'nice-grpc': 'latest',
    'nice-grpc-common': 'latest',
    '@trpc/client': 'latest',
    '@trpc/server': 'latest',
  },
};

const failures = [];
const fail = (what, detail = '') => {
  failures.push(what);
  console.error(`✗ ${what}${detail ? `\n${indent(detail)}` : ''}`);
};
const pass = (what) => console.log(`✓ ${what}`);
const indent = (text) =>
  String(text)
    .trim()
    .split('\n')
    .slice(-40)
    .map((l) => `    ${l}`)
    .join('\n');

/** Runs a command; returns { ok, output } with stdout and stderr together. */
function run(cmd, cmdArgs, cwd, env = {}) {
  const r = spawnSync(cmd, cmdArgs, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 240_000,
  });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`;
  return { ok: r.status === 0, output };
}

function check(what, cmd, cmdArgs, cwd, env) {
  const r = run(cmd, cmdArgs, cwd, env);
  if (r.ok) pass(what);
  else fail(what, r.output);
  return r.ok;
}

const work = mkdtempSync(join(tmpdir(), 'breakwater-packages-'));
const tarballDir = join(work, 'tarballs');
mkdirSync(tarballDir);
const npmCache = process.env.BREAKWATER_NPM_CACHE ?? join(tmpdir(), 'breakwater-npm-cache');

// 1. Pack and inspect every tarball; `pnpm publish --dry-run` must be clean.
const tarballs = {};
for (const dir of PACKAGES) {
  const cwd = join(root, 'packages', dir);
  const before = new Set(readdirSync(tarballDir));
  if (!check(`pack packages/${dir}`, 'pnpm', ['pack', '--pack-destination', tarballDir], cwd))
    continue;
  const file = readdirSync(tarballDir).find((f) => !before.has(f));
  const name = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')).name;
  tarballs[name] = join(tarballDir, file);
  const files = execFileSync('tar', ['-tzf', tarballs[name]], { encoding: 'utf8' }).split('\n');
  const packed = JSON.parse(
    execFileSync('tar', ['-xOzf', tarballs[name], 'package/package.json'], { encoding: 'utf8' }),
  );
  const problems = [];
  for (const required of ['package/LICENSE', 'package/README.md', 'package/package.json']) {
    if (!files.includes(required)) problems.push(`missing ${required}`);
  }
  const maps = files.filter((f) => f.endsWith('.map'));
  if (maps.length > 0) problems.push(`source maps without their sources: ${maps.slice(0, 3)}`);
  for (const field of ['repository', 'homepage', 'bugs', 'keywords', 'license']) {
    if (packed[field] === undefined) problems.push(`package.json has no "${field}"`);
  }
  const manifest = JSON.stringify(packed);
  if (manifest.includes('workspace:')) problems.push('a workspace: range was not replaced');
  const pinned = Object.entries(packed.peerDependencies ?? {}).filter(([, r]) =>
    /^\d/.test(String(r)),
  );
  if (pinned.length > 0) problems.push(`exact peer pins: ${JSON.stringify(pinned)}`);
  // Nothing is published: --dry-run stops before the upload; any other warning fails.
  const dryRun = run('pnpm', ['publish', '--dry-run', '--no-git-checks'], cwd);
  const noise = dryRun.output
    .split('\n')
    .filter((l) => /warn|err/i.test(l) && !/\(dry run\)/.test(l));
  if (!dryRun.ok || noise.length > 0) problems.push(`pnpm publish --dry-run:\n${dryRun.output}`);
  if (problems.length === 0)
    pass(`tarball ${name}: ${files.length - 1} files, publish --dry-run clean`);
  else fail(`tarball ${name}`, problems.join('\n'));
}

// npm 11 runs install scripts only when approved; these two are our tools' and
// grpc-js's (protobufjs), approved as a user would, so the run stays warning-free.
const allowScripts = { esbuild: true, protobufjs: true };

/** Runs a command without blocking; resolves { ok, output }. */
function runAsync(cmd, cmdArgs, cwd) {
  return new Promise((done) => {
    const child = spawn(cmd, cmdArgs, { cwd, env: process.env });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('error', (e) => done({ ok: false, output: `${output}${e}` }));
    child.on('close', (code) => done({ ok: code === 0, output }));
  });
}

/** Writes a fresh npm project and starts its install; resolves its folder or undefined. */
async function install(name, dependencies) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const manifest = { name: `consumer-${name}`, private: true, dependencies, allowScripts };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const r = await runAsync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--cache', npmCache],
    dir,
  );
  const warnings = r.output.split('\n').filter((l) => /npm warn|ERESOLVE|npm err/i.test(l));
  if (!r.ok || warnings.length > 0) {
    fail(`npm install (${name})`, warnings.length > 0 ? warnings.join('\n') : r.output);
    return undefined;
  }
  pass(`npm install (${name}): no warning`);
  return dir;
}

const ours = (names) =>
  Object.fromEntries(names.filter((n) => tarballs[n]).map((n) => [n, `file:${tarballs[n]}`]));

/** Every subpath export of a packed package as import specifiers. */
function entriesOf(name) {
  const exportsMap = JSON.parse(
    execFileSync('tar', ['-xOzf', tarballs[name], 'package/package.json'], { encoding: 'utf8' }),
  ).exports;
  return Object.keys(exportsMap)
    .filter((k) => k !== './package.json')
    .map((k) => (k === '.' ? name : `${name}/${k.slice(2)}`));
}

/** The Breakwater packages `name` needs at run time, itself included. */
function closure(name) {
  const packed = JSON.parse(
    execFileSync('tar', ['-xOzf', tarballs[name], 'package/package.json'], { encoding: 'utf8' }),
  );
  const declared = { ...packed.dependencies, ...packed.peerDependencies };
  const internal = Object.keys(declared).filter((d) => d in tarballs);
  return [...new Set([name, ...internal.flatMap(closure)])];
}

// All installs run at once (npm's cache is safe to share); the checks after them in turn.
const adapters = [
  '@breakwater/core',
  '@breakwater/grpc-js',
  '@breakwater/nice-grpc',
  '@breakwater/trpc',
];
const everything = only === undefined;
const [minimals, matrix, firstContact, redisProject] = await Promise.all([
  Promise.all(
    (everything ? Object.keys(tarballs) : []).map(async (name) => {
      const extra = BROWSER_ENTRIES.includes(name) ? { esbuild: TOOLS.esbuild } : {};
      // The OpenTelemetry bridge is also type-checked alone (section 2b).
      if (name === '@breakwater/otel') Object.assign(extra, TOOLS);
      const dir = await install(`minimal-${name.split('/')[1]}`, {
        ...ours(closure(name)),
        ...extra,
      });
      return [name, dir];
    }),
  ),
  Promise.all(
    (everything ? Object.entries(MATRIX) : []).map(async ([row, frameworks]) => [
      row,
      await install(row, { ...ours(adapters), ...frameworks, ...TOOLS }),
    ]),
  ),
  // Only what the README's install line and snippet name, with the newest frameworks.
  only === 'redis'
    ? undefined
    : install('first-contact', {
        ...ours([
          '@breakwater/core',
          '@breakwater/grpc-js',
          '@breakwater/nice-grpc',
          '@breakwater/trpc',
        ]),
        '@grpc/grpc-js': MATRIX.newest['@grpc/grpc-js'],
        '@grpc/proto-loader': MATRIX.newest['@grpc/proto-loader'],
        'nice-grpc': MATRIX.newest['nice-grpc'],
        // A ts-proto user's project: the generator and the runtime its output imports.
        'ts-proto': 'latest',
        '@bufbuild/protobuf': 'latest',
        '@trpc/client': MATRIX.newest['@trpc/client'],
        '@trpc/server': MATRIX.newest['@trpc/server'],
        typescript: TOOLS.typescript,
        '@types/node': TOOLS['@types/node'],
      }),
  // @breakwater/redis and what it names: core and the ioredis peer (npm adds it).
  everything || only === 'redis'
    ? install('redis', { ...ours(closure('@breakwater/redis')), ...TOOLS })
    : undefined,
]);

// 2. Minimal: each package alone; every entry loads both ways.
for (const [name, dir] of minimals) {
  if (!dir) continue;
  for (const entry of entriesOf(name)) {
    if (OPTIONAL_PEER_ENTRIES.has(entry)) continue;
    const spec = JSON.stringify(entry);
    check(
      `import ${entry}`,
      process.execPath,
      ['--input-type=module', '-e', `await import(${spec})`],
      dir,
    );
    check(`require ${entry}`, process.execPath, ['-e', `require(${spec})`], dir);
  }
  if (BROWSER_ENTRIES.includes(name)) {
    const file = join(dir, 'browser-entry.mjs');
    writeFileSync(file, `export * from ${JSON.stringify(name)};\n`);
    const out = `--outfile=${join(dir, 'browser.js')}`;
    check(
      `esbuild --platform=browser ${name}`,
      join(dir, 'node_modules/.bin/esbuild'),
      [file, '--bundle', '--platform=browser', '--format=esm', '--log-level=error', out],
      dir,
    );
  }
}

// 2b. @breakwater/otel alone (core, and the @opentelemetry/api peer npm installs):
// its README setup type-checks as ESM and as CommonJS, and runs.
const otelDir = minimals.find(([name]) => name === '@breakwater/otel')?.[1];
if (otelDir) {
  const program = [
    "import { protect } from '@breakwater/core';",
    "import { otelTelemetry } from '@breakwater/otel';",
    'const run = protect({ retry: { attempts: 2 }, telemetry: otelTelemetry() });',
    'run(async () => 1).then((v: number) => console.log(v));',
    '',
  ].join('\n');
  for (const type of ['module', 'commonjs']) {
    const sub = join(otelDir, type);
    mkdirSync(sub);
    writeFileSync(join(sub, 'otel.ts'), program);
    writeFileSync(join(sub, 'package.json'), `${JSON.stringify({ type })}\n`);
    const compilerOptions = {
      target: 'es2022',
      module: 'node16',
      moduleResolution: 'node16',
      strict: true,
      skipLibCheck: false,
      types: ['node'],
      outDir: 'dist',
    };
    writeFileSync(
      join(sub, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['otel.ts'] }),
    );
    const tsc = join(otelDir, 'node_modules/typescript/bin/tsc');
    if (
      check(`tsc --strict @breakwater/otel (${type})`, process.execPath, [tsc, '-p', sub], otelDir)
    ) {
      check(
        `run @breakwater/otel (${type})`,
        process.execPath,
        [join(sub, 'dist/otel.js')],
        otelDir,
      );
    }
  }
}

// 3. Oldest and newest supported frameworks: type-check and run the consumer.
const TSCONFIG = {
  esm: { module: 'node16', moduleResolution: 'node16', outDir: 'dist' },
  cjs: { module: 'node16', moduleResolution: 'node16', outDir: 'dist' },
  bundler: { module: 'esnext', moduleResolution: 'bundler', noEmit: true },
};
for (const [row, dir] of matrix) {
  if (!dir) continue;
  copyFileSync(join(fixtures, 'echo.proto'), join(dir, 'echo.proto'));
  writeFileSync(join(dir, 'browser.ts'), readFileSync(join(fixtures, 'browser.ts')));
  const tsc = join(dir, 'node_modules/typescript/bin/tsc');
  const esbuild = join(dir, 'node_modules/.bin/esbuild');
  for (const [kind, options] of Object.entries(TSCONFIG)) {
    const sub = join(dir, kind);
    mkdirSync(sub);
    copyFileSync(join(fixtures, 'client.ts'), join(sub, 'client.ts'));
    const type = kind === 'cjs' ? 'commonjs' : 'module';
    writeFileSync(join(sub, 'package.json'), `${JSON.stringify({ type })}\n`);
    const compilerOptions = {
      target: 'es2022',
      lib: ['es2022', 'dom'],
      strict: true,
      skipLibCheck: false,
      types: ['node'],
      ...options,
    };
    const files = kind === 'bundler' ? ['client.ts', '../browser.ts'] : ['client.ts'];
    writeFileSync(
      join(sub, 'tsconfig.json'),
      `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`,
    );
    if (!check(`tsc --strict (${row}, ${kind})`, process.execPath, [tsc, '-p', sub], dir)) continue;
    let program = join(sub, 'dist/client.js');
    if (kind === 'bundler') {
      program = join(sub, 'client.cjs');
      const bundled = check(
        `esbuild bundle (${row})`,
        esbuild,
        [
          join(sub, 'client.ts'),
          '--bundle',
          '--platform=node',
          '--format=cjs',
          '--log-level=error',
          // It reads its .proto from its own folder at load: not bundleable, left to node_modules.
          '--external:grpc-health-check',
          `--outfile=${program}`,
        ],
        dir,
      );
      check(
        `esbuild --platform=browser core + trpc (${row})`,
        esbuild,
        [
          join(dir, 'browser.ts'),
          '--bundle',
          '--platform=browser',
          '--format=esm',
          '--log-level=error',
          `--outfile=${join(sub, 'browser.js')}`,
        ],
        dir,
      );
      if (!bundled) continue;
    }
    check(`run clients (${row}, ${kind})`, process.execPath, [program], dir);
  }
}

// 4. First contact: the root README's snippets, verbatim, on the user's own proto and router.
const rootReadme = readFileSync(join(root, 'README.md'), 'utf8');
/** The `ts` block between `<!-- first-contact:<name>:start/end -->`; a missing one fails. */
function readmeSnippet(name) {
  const start = `<!-- first-contact:${name}:start -->`;
  const at = rootReadme.indexOf(start);
  const end = rootReadme.indexOf(`<!-- first-contact:${name}:end -->`, at);
  const between = at < 0 || end < 0 ? '' : rootReadme.slice(at + start.length, end);
  const code = /^\s*```ts\n([\s\S]*?)```\s*$/.exec(between)?.[1];
  if (code === undefined) fail(`README first contact: no ${name} snippet between its markers`);
  return code;
}
/** Writes a strict tsconfig for `files` into `dir`. */
function strictProject(dir, options, files) {
  const compilerOptions = {
    target: 'es2022',
    strict: true,
    skipLibCheck: false,
    types: ['node'],
    ...options,
  };
  writeFileSync(
    join(dir, 'tsconfig.json'),
    `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`,
  );
}
const trpcSnippet = readmeSnippet('trpc');
/**
 * Copies a gRPC snippet into `firstContact/<folder>`, lets `prepare` add what the
 * user's project would have (generated code), type-checks it with tsc --strict
 * and runs it against your server (first-contact.mjs): two attempts must arrive.
 */
function grpcSnippetCase(name, folder, prepare = () => true) {
  const code = readmeSnippet(name);
  if (!firstContact || code === undefined) return;
  const app = join(firstContact, folder);
  mkdirSync(app);
  writeFileSync(join(app, 'snippet.ts'), code);
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
  strictProject(app, TSCONFIG.esm, ['snippet.ts']);
  copyFileSync(join(fixtures, 'hello.proto'), join(firstContact, 'hello.proto'));
  copyFileSync(join(fixtures, 'first-contact.mjs'), join(firstContact, 'first-contact.mjs'));
  const tsc = join(firstContact, 'node_modules/typescript/bin/tsc');
  const what = `README first contact (${name})`;
  if (!prepare(app)) return;
  if (check(`${what}: tsc --strict`, process.execPath, [tsc, '-p', app], firstContact))
    check(
      `${what}: runs and retries against your server`,
      process.execPath,
      ['first-contact.mjs', join(app, 'dist/snippet.js')],
      firstContact,
    );
}
grpcSnippetCase('grpc-js', 'app');
// ts-proto's output, made as its README says: protoc (Debian's protobuf-compiler) with the plugin.
grpcSnippetCase('nice-grpc', 'nice', (app) => {
  mkdirSync(join(app, 'generated'));
  const options = [
    'outputServices=nice-grpc',
    'outputServices=generic-definitions',
    'useExactTypes=false',
    'esModuleInterop=true',
    'importSuffix=.js',
  ];
  return check(
    'README first contact (nice-grpc): protoc + ts-proto generate generated/hello.ts',
    'protoc',
    [
      `--plugin=${join(firstContact, 'node_modules/.bin/protoc-gen-ts_proto')}`,
      `--ts_proto_out=${join(app, 'generated')}`,
      `--ts_proto_opt=${options.join(',')}`,
      'hello.proto',
    ],
    firstContact,
  );
});
grpcSnippetCase('nice-grpc-proto-loader', 'nice-loader');
if (firstContact && trpcSnippet !== undefined) {
  const web = join(firstContact, 'web');
  mkdirSync(web);
  writeFileSync(join(web, 'client.ts'), trpcSnippet);
  copyFileSync(join(fixtures, 'trpc-server.ts'), join(web, 'server.ts'));
  strictProject(web, { ...TSCONFIG.bundler, lib: ['es2022', 'dom'] }, ['client.ts']);
  const tsc = join(firstContact, 'node_modules/typescript/bin/tsc');
  check(
    'README first contact: tRPC snippet tsc --strict',
    process.execPath,
    [tsc, '-p', web],
    firstContact,
  );
}

// 5. @breakwater/redis: type-check the consumer three ways and run it against a real redis-server.
/** Starts redis-server on a free loopback port in `dir`; resolves { port, stop } or undefined. */
async function startRedis(dir) {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise((listening) => probe.listen(0, '127.0.0.1', listening));
  const { port } = probe.address();
  await new Promise((closed) => probe.close(closed));
  // The configuration on stdin (`redis-server -`): no persistence, loopback only.
  const server = spawn('redis-server', ['-'], { stdio: ['pipe', 'pipe', 'pipe'] });
  server.stdin.end(`port ${port}\nbind 127.0.0.1\nsave ""\nappendonly no\ndir ${dir}\n`);
  let log = '';
  const ready = await new Promise((settle) => {
    server.on('error', (e) => settle(`${e} (apt-get install -y redis-server)`));
    server.on('exit', (code) => settle(`redis-server exited with ${code}\n${log}`));
    server.stdout.on('data', (d) => {
      log += d;
      if (log.includes('Ready to accept connections')) settle(true);
    });
  });
  if (ready !== true) {
    fail('redis-server for the redis consumer', ready);
    return undefined;
  }
  server.stdout.resume();
  return { port, stop: () => server.kill('SIGKILL') };
}
if (redisProject) {
  const redis = await startRedis(redisProject);
  const tsc = join(redisProject, 'node_modules/typescript/bin/tsc');
  for (const [kind, options] of redis ? Object.entries(TSCONFIG) : []) {
    const sub = join(redisProject, kind);
    mkdirSync(sub);
    copyFileSync(join(fixtures, 'redis.ts'), join(sub, 'redis.ts'));
    const type = kind === 'cjs' ? 'commonjs' : 'module';
    writeFileSync(join(sub, 'package.json'), `${JSON.stringify({ type })}\n`);
    strictProject(sub, { ...options, lib: ['es2022'] }, ['redis.ts']);
    if (!check(`redis: tsc --strict (${kind})`, process.execPath, [tsc, '-p', sub], redisProject))
      continue;
    let program = join(sub, 'dist/redis.js');
    if (kind === 'bundler') {
      program = join(sub, 'redis.cjs');
      const bundle = [join(sub, 'redis.ts'), '--bundle', '--platform=node', '--format=cjs'];
      if (
        !check(
          'redis: esbuild bundle',
          join(redisProject, 'node_modules/.bin/esbuild'),
          [...bundle, '--log-level=error', `--outfile=${program}`],
          redisProject,
        )
      )
        continue;
    }
    check(`redis: run against redis-server (${kind})`, process.execPath, [program], redisProject, {
      REDIS_PORT: String(redis.port),
    });
  }
  redis?.stop();
}

if (keep) console.log(`kept ${work}`);
else rmSync(work, { recursive: true, force: true });
if (failures.length > 0) {
  console.error(`\npackaging check: ${failures.length} failed`);
  process.exit(1);
}
console.log('\npackaging check: all passed');
