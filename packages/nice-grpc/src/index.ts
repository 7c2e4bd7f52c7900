// Filled in by the nice-grpc issue.
export {};
