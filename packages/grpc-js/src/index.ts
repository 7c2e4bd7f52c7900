// Filled in by the grpc-js issue.
export {};
