// `pnpm demo` — the demo lands with the demo issue; until then it says so.
console.log('Breakwater demo: coming soon (see README, "Status").');
