// glibc's allocator controls and statistics (<malloc.h>, which Swift's Glibc module does not
// include). Only the ProcessMemory module includes this.
#include <malloc.h>
#include <stddef.h>

/// Bytes the process's allocations hold now: in use in every arena plus mmapped chunks
/// (mallinfo2, glibc 2.33+).
static inline size_t vitrine_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

/// Returns the free pages of every arena to the kernel (malloc_trim(0)). Returns 1 when memory
/// was released.
static inline int vitrine_release_free_heap(void) {
    return malloc_trim(0);
}
