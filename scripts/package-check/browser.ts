// Bundled with esbuild --platform=browser from the packed tarballs: the
// browser-safe entries must pull in no Node built-in.
import { createCircuitBreaker } from '@breakwater/core';
import { resilienceLink, routingLink } from '@breakwater/trpc';

export const parts = [createCircuitBreaker, resilienceLink, routingLink];
