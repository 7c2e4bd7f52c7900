// Filled in by the chaos issue.
export * from './trpc/index.js';
