/** Every lane's call has this deadline (ms), so a hung call ends the same way in all of them. */
export const CALL_DEADLINE_MS = 1_000;

/** The three kinds of client compared, in display order. */
export const FLAVOURS = ['none', 'usual', 'breakwater'] as const;

/** What each flavour is, for tables and the report. */
export const FLAVOUR_LABELS: Record<(typeof FLAVOURS)[number], string> = {
  none: 'no resilience',
  usual: "today's usual retries",
  breakwater: 'Breakwater',
};
