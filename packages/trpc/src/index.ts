// Filled in by the trpc issue.
export {};
