// The page of test/browser.test.ts, bundled by esbuild for the browser: a tRPC
// client with resilienceLink and routingLink, exposed as scenarios the test
// runs in headless Chromium against chaos tRPC servers.
import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { isCircuitOpenError, isDeadlineExceededError } from '@breakwater/core';
import { resilienceLink, routingLink } from '@breakwater/trpc';
import { createTRPCClient, httpLink, TRPCClientError, type TRPCLink } from '@trpc/client';

/** What a scenario hands back to the test (serializable): answers and error kinds in order. */
export interface Outcome {
  answered: string[];
  errors: string[];
}

/** The Breakwater or tRPC name of a failed call, so the test can assert it. */
function errorKind(error: unknown): string {
  const cause = error instanceof TRPCClientError ? error.cause : error;
  if (isCircuitOpenError(cause)) return 'circuit-open';
  if (isDeadlineExceededError(cause)) return 'deadline';
  if (error instanceof TRPCClientError) return `trpc ${error.data?.code ?? error.message}`;
  return String(error);
}

/** Runs `count` echo queries one after another through `links`. */
async function queries(links: TRPCLink<ChaosTrpcRouter>[], count: number): Promise<Outcome> {
  const client = createTRPCClient<ChaosTrpcRouter>({ links });
  const outcome: Outcome = { answered: [], errors: [] };
  for (let i = 0; i < count; i++) {
    try {
      outcome.answered.push((await client.echo.query(`q${i}`)).server);
    } catch (error) {
      outcome.errors.push(errorKind(error));
    }
  }
  return outcome;
}

const endpoint = (url: string, callId: string) =>
  httpLink<ChaosTrpcRouter>({ url, headers: () => ({ 'x-call-id': callId }) });

/**
 * The browser's own fetch; when it rejects (a refused connection), the test is
 * told through `refused` (a Playwright binding that starts the server) before
 * the error goes on to the links.
 */
const reportingFetch = async (input: string | URL | Request, init?: object): Promise<Response> => {
  try {
    return await fetch(input, init as RequestInit);
  } catch (error) {
    const refused = (globalThis as { refused?: (message: string) => Promise<void> }).refused;
    await refused?.(String(error));
    throw error;
  }
};

const scenarios = {
  /** Retries: the server fails the first two attempts of the call. */
  retry: (url: string) =>
    queries(
      [
        resilienceLink({ retry: { attempts: 3, backoff: { baseDelayMs: 10 } } }),
        endpoint(url, 'retry'),
      ],
      1,
    ),
  /** Deadlines: the server never answers; two 150 ms attempts inside a 1 s call. */
  deadline: (url: string) =>
    queries(
      [
        resilienceLink({
          timeoutMs: 1_000,
          attemptTimeoutMs: 150,
          retry: { attempts: 2, backoff: { baseDelayMs: 10 } },
        }),
        endpoint(url, 'deadline'),
      ],
      1,
    ),
  /** Circuit: every request fails; after two failures the circuit refuses locally. */
  circuit: (url: string) =>
    queries(
      [
        resilienceLink({
          retry: false,
          circuit: { failureThreshold: 2, failureSpanMs: 0, openDurationMs: 60_000 },
        }),
        endpoint(url, 'circuit'),
      ],
      4,
    ),
  /**
   * A mutation (not idempotent) whose first attempt finds the server's port
   * closed: the browser's "Failed to fetch" is never-sent, so resilienceLink
   * retries it once the server listens again.
   */
  refused: async (url: string): Promise<Outcome> => {
    const client = createTRPCClient<ChaosTrpcRouter>({
      links: [
        resilienceLink({ retry: { attempts: 3, backoff: { baseDelayMs: 10 } } }),
        httpLink<ChaosTrpcRouter>({ url, fetch: reportingFetch }),
      ],
    });
    try {
      return { answered: [String(await client.counter.increment.mutate())], errors: [] };
    } catch (error) {
      return { answered: [], errors: [errorKind(error)] };
    }
  },
  /** Routing: the primary refuses connections; every query fails over to the secondary. */
  routing: (primary: string, secondary: string) =>
    queries(
      [
        routingLink<ChaosTrpcRouter>({
          endpoints: [
            { id: 'primary', link: endpoint(primary, 'routing') },
            { id: 'secondary', link: endpoint(secondary, 'routing') },
          ],
          selection: { type: 'priority', priorities: { primary: 1, secondary: 0 } },
          protection: {
            circuit: { failureThreshold: 2, failureSpanMs: 0, openDurationMs: 60_000 },
          },
        }),
      ],
      4,
    ),
};

/** The scenarios as the test calls them through `page.evaluate`. */
export type Scenarios = typeof scenarios;
(globalThis as { breakwater?: Scenarios }).breakwater = scenarios;
