//! Cache hints: ask for memory a step before it is read, so that the load
//! overlaps other work instead of stalling it.

/// A hint to bring `value`'s first cache line into the caches (all of it
/// measured no better); nothing where the target has no such instruction.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_line((value as *const T).cast());
}

/// `prefetch` for every cache line `value` spans.
#[inline(always)]
pub fn prefetch_all<T>(value: &T) {
    let start = value as *const T as usize;
    let size = std::mem::size_of::<T>();
    if size <= 64 {
        // At most two lines: its first and last bytes', with no loop (the
        // same line twice costs nothing).
        prefetch_line(start as *const u8);
        prefetch_line((start + size - 1) as *const u8);
        return;
    }
    for line in (start & !63..start + size).step_by(64) {
        prefetch_line(line as *const u8);
    }
}

/// `prefetch` for every cache line of `value`'s first `bytes` bytes.
#[inline(always)]
pub fn prefetch_start<T>(value: &T, bytes: usize) {
    let start = value as *const T as usize;
    for line in (start & !63..start + bytes).step_by(64) {
        prefetch_line(line as *const u8);
    }
}

/// `prefetch` for the cache line `offset` bytes into `value`.
#[inline(always)]
pub fn prefetch_at<T>(value: &T, offset: usize) {
    debug_assert!(offset < std::mem::size_of::<T>());
    prefetch_line((value as *const T as usize + offset) as *const u8);
}

#[inline(always)]
fn prefetch_line(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache: it reads nothing and cannot
    // fault, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
