/**
 * The subscription input to resume after `lastEventId`, the way tRPC's own
 * links do it: merged into an object (or `undefined`) input; other inputs
 * are left alone.
 * @internal
 */
export function inputAfterEvent(input: unknown, lastEventId: string | undefined): unknown {
  if (!lastEventId) return input;
  if (input != null && typeof input !== 'object') return input;
  return { ...(input ?? {}), lastEventId };
}
