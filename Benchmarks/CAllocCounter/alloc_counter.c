// Benchmark-only allocation counter. Linked into the parley-bench executable, these definitions
// interpose glibc's allocator for the whole process (the executable's symbols come first in the
// dynamic lookup), count each call with a relaxed atomic, and forward to glibc's own entry points.
// The harness reads the count around each timed sample to report allocations per unit of work.
#include "alloc_counter.h"
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Atomic uint64_t allocations;

uint64_t parley_bench_allocations(void) {
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}

static inline void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) {
    if (p == NULL) count();
    return __libc_realloc(p, size);
}
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL && size != 0) return ENOMEM;
    *out = p;
    return 0;
}
