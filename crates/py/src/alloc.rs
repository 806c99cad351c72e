//! The extension's allocator: the system's, asking Linux for transparent
//! huge pages on large blocks.
//!
//! The simulator's arenas (flows, links, the pools of packets and events)
//! are read at random by every event; at 50,000 flows they span tens of
//! megabytes, and with 4 KB pages nearly every read also missed the TLB.
//! Advised as huge pages, 2 MB is one TLB entry: the 10 Gb/s, 50,000-flow
//! backbone ran 5–6% faster (docs/performance.md, seventh round). Linux
//! gives huge pages only to memory advised so (`madvise` mode, this
//! machine's and most distributions' default), and glibc's own switch
//! (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`) must be set before the Python
//! process starts. Small blocks are left alone: a huge page half used
//! would cost resident memory for nothing.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks from this size on are advised (only whole 2 MB pages inside a
/// block can become huge pages).
const HUGE_FROM: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

pub struct HugePages;

/// Ask for huge pages on the whole 2 MB pages inside `[ptr, ptr + size)`.
/// Only advice: if the kernel cannot or will not, nothing changes.
fn advise(ptr: *mut u8, size: usize) {
    if ptr.is_null() || size < HUGE_FROM {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + size) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: the range lies inside a block this process owns;
        // MADV_HUGEPAGE changes how it is backed, never its contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

// SAFETY: every block comes from, and goes back to, the system allocator
// unchanged; `advise` only hints at how its pages are backed.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let ptr = unsafe { System.realloc(ptr, layout, new_size) };
        advise(ptr, new_size);
        ptr
    }
}
