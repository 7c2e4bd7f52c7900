/** One variant of an interleaved comparison: runs one round and returns its figure. */
export type RoundFn = (round: number) => Promise<number> | number;

/**
 * Runs `rounds` rounds; in each round every variant runs once, back to back.
 * The order rotates by one each round (A B C, B C A, C A B, …; for two
 * variants A B, B A, A B …) so no variant always pays for the garbage or the
 * cold cache the one before it left. Returns each variant's figures in round
 * order, so series from the same run can be paired with `pairedRatios`
 * (`@breakwater/chaos`).
 */
export async function runInterleaved(
  variants: Readonly<Record<string, RoundFn>>,
  rounds: number,
): Promise<Record<string, number[]>> {
  const names = Object.keys(variants);
  const out: Record<string, number[]> = {};
  for (const name of names) out[name] = [];
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length] as string;
      const run = variants[name] as RoundFn;
      (out[name] as number[]).push(await run(r));
    }
  }
  return out;
}
