// @breakwater/core/node — the parts of core that need Node built-ins (node:http,
// node:https, node:net, node:async_hooks). Kept off the main entry so `@breakwater/core` bundles
// for browsers and other non-Node runtimes.

export type { HttpProbeOptions, HttpTarget } from './health/http-probe.js';
export { createHttpProbe, httpProbe } from './health/http-probe.js';
export type { TcpProbeOptions, TcpTarget } from './health/tcp-probe.js';
export { createTcpProbe, tcpProbe } from './health/tcp-probe.js';
export { inboundFromHeaders, parseGrpcTimeout } from './propagation/from-headers.js';
export { createInboundCall, type InboundCallInit } from './propagation/inbound-call.js';
export { runInbound } from './propagation/run-inbound.js';
