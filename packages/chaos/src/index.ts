// Filled in by the chaos issue.
export {};
