// Runs one of the root README's gRPC snippets, as compiled by `tsc --strict` in a fresh
// npm project, against "your server": a plain grpc-js server for hello.proto whose
// first attempt fails with UNAVAILABLE and whose second answers. The only edit to
// the snippet is the one a newcomer makes: their server's address.
// Usage (from the project root): node first-contact.mjs <compiled snippet.js>
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

const compiled = resolve(process.argv[2]);
let attempts = 0;
const server = new grpc.Server();
server.addService(loadSync('hello.proto')['hello.Greeter'], {
  SayHello(call, callback) {
    attempts++;
    if (attempts === 1) callback({ code: grpc.status.UNAVAILABLE, details: 'first attempt fails' });
    else callback(null, { message: `Hello ${call.request.name}` });
  },
});
const port = await new Promise((done, reject) =>
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
    e ? reject(e) : done(p),
  ),
);

const source = readFileSync(compiled, 'utf8');
assert.ok(source.includes("'localhost:50051'"), "the README snippet dials 'localhost:50051'");
const runnable = compiled.replace(/\.js$/, '.run.js');
writeFileSync(runnable, source.replace("'localhost:50051'", `'127.0.0.1:${port}'`));

// The snippet prints the reply (or the error) once, when its call ends.
const log = console.log;
const printed = [];
const done = new Promise((settle) => {
  console.log = (...args) => {
    printed.push(args);
    settle();
  };
});
try {
  await import(pathToFileURL(runnable).href);
  const timeout = delay(10_000, 'timeout', { ref: false });
  assert.notEqual(await Promise.race([done, timeout]), 'timeout', 'the snippet printed nothing');
} finally {
  console.log = log;
  server.forceShutdown();
}
assert.deepEqual(printed, [[{ message: 'Hello Ada' }]], 'the snippet printed the reply');
assert.equal(attempts, 2, 'the server saw the failed attempt and the retry');
console.log('ok: README snippet compiled and retried (2 attempts)');
