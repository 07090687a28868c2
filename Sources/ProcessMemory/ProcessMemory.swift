import CMemory

/// The process's heap as glibc's allocator sees it, and a way to give its free pages back.
///
/// A player that runs for months opens and closes decoders all day: every item brings its own
/// codec contexts, frame pools and packet queues, allocated by a dozen threads from as many
/// allocator arenas and freed on the teardown queue. glibc keeps freed memory in its arenas for
/// reuse and returns it to the kernel only from an arena's top, so the resident size creeps up
/// (0.6 MB an hour in the accelerated soak, 7 % in a day) while what is actually in use stays
/// flat. ``releaseFreePages()`` after each item's teardown gives those pages back.
public enum ProcessMemory {
    /// Bytes the process's allocations hold now: in use in every arena plus mmapped chunks.
    /// Beside the resident size it tells growth (both rise) from fragmentation (only the
    /// resident size rises).
    public static var heapInUse: Int { Int(vitrine_heap_in_use()) }

    /// Returns the free pages of every allocator arena to the kernel (`malloc_trim(0)`): takes
    /// each arena's lock in turn while it walks its free chunks, so call it off the threads that
    /// must keep time. Returns whether any memory was released.
    @discardableResult
    public static func releaseFreePages() -> Bool { vitrine_release_free_heap() != 0 }
}
