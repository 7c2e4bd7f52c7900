// Placeholder runner replaced by the benchmark suite (issue 9).
console.log('bench: no benchmarks yet');
