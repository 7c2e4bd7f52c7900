// "Your router" for the README first-contact check: the tRPC snippet imports its type.
import { initTRPC } from '@trpc/server';

const t = initTRPC.create();
export const appRouter = t.router({
  hello: t.procedure.query(() => 'world'),
});
export type AppRouter = typeof appRouter;
