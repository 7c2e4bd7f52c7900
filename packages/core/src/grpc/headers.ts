/** The request header that tells the server how many attempts came before this one (gRFC A6). */
export const PREVIOUS_ATTEMPTS_HEADER = 'grpc-previous-rpc-attempts';
