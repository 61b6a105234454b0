// Benchmark-only: counts heap allocations of the whole parley-bench process.
#pragma once
#include <stdint.h>

/// Number of allocations (malloc, calloc, realloc of a new block, aligned allocations) made by
/// the process so far, all threads.
uint64_t parley_bench_allocations(void);
