import { systemSleep } from '@breakwater/core/time';
import { initTRPC, TRPCError, tracked } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { z } from 'zod';

/** What each chaos server hands its procedures. @internal */
export interface ChaosTrpcContext {
  /** Name of the server that answers (recorded by tests as "which server answered"). */
  server: string;
  /** Mutable per-server state the procedures touch. */
  state: {
    /** Value of the `counter` procedures, changed only by `counter.increment`. */
    counter: number;
    /** The `lastEventId` each `events` subscription started with (`null` for a fresh start). */
    subscriptionStarts: Array<string | null>;
  };
}

const t = initTRPC.context<ChaosTrpcContext>().create();

const errorCodes = Object.keys(TRPC_ERROR_CODES_BY_KEY) as [
  keyof typeof TRPC_ERROR_CODES_BY_KEY,
  ...Array<keyof typeof TRPC_ERROR_CODES_BY_KEY>,
];

/**
 * The router every chaos tRPC server serves: `echo`, `slow`, `fail`, a
 * `counter` with a side-effecting mutation, and an `events` subscription of
 * tracked events that resumes after `lastEventId`.
 */
export const chaosTrpcRouter = t.router({
  /** Returns its input and the name of the server that answered. */
  echo: t.procedure
    .input(z.string().optional())
    .query(({ input, ctx }) => ({ value: input ?? null, server: ctx.server })),
  /** Answers after `ms` milliseconds (stops early when the request is cancelled). */
  slow: t.procedure
    .input(z.object({ ms: z.number().min(0) }))
    .query(async ({ input, ctx, signal }) => {
      await systemSleep(input.ms, signal);
      return { sleptMs: input.ms, server: ctx.server };
    }),
  /** Throws a `TRPCError` with the requested code. */
  fail: t.procedure
    .input(z.object({ code: z.enum(errorCodes), message: z.string().optional() }))
    .query(({ input }) => {
      throw new TRPCError({ code: input.code, message: input.message ?? `chaos ${input.code}` });
    }),
  counter: t.router({
    /** Current counter value. */
    get: t.procedure.query(({ ctx }) => ctx.state.counter),
    /** Adds `by` (default 1) and returns the new value: not safe to repeat. */
    increment: t.procedure
      .input(z.object({ by: z.number().default(1) }).optional())
      .mutation(({ input, ctx }) => {
        ctx.state.counter += input?.by ?? 1;
        return ctx.state.counter;
      }),
  }),
  /** Emits tracked events `1..count`, resuming after `lastEventId`. */
  events: t.procedure
    .input(
      z
        .object({
          lastEventId: z.string().nullish(),
          count: z.number().int().min(0).default(10),
          intervalMs: z.number().min(0).default(5),
        })
        .optional(),
    )
    .subscription(async function* ({ input, ctx, signal }) {
      const last = input?.lastEventId ?? null;
      ctx.state.subscriptionStarts.push(last);
      const count = input?.count ?? 10;
      for (let i = last === null ? 1 : Number(last) + 1; i <= count; i++) {
        if (signal?.aborted) return;
        await systemSleep(input?.intervalMs ?? 5, signal);
        yield tracked(String(i), { i, server: ctx.server });
      }
    }),
});

/** The type of {@link chaosTrpcRouter}, for `createTRPCClient<ChaosTrpcRouter>`. */
export type ChaosTrpcRouter = typeof chaosTrpcRouter;
