//! The one place retrylint's binary holds `unsafe` code, kept out of the main
//! crate (which forbids it): a global allocator that passes every call to
//! mimalloc and, when an allocation fails, first writes a message that names
//! the process's memory limit.
//!
//! Stable Rust has no hook for allocation failure: `handle_alloc_error` prints
//! "memory allocation of N bytes failed" and aborts, which says nothing about
//! why. So the allocator itself writes the message, at the one moment it can
//! see the failure. It must not allocate, lock or format then: the text is
//! made at start-up ([`prepare`]) and written with a single `write(2)`.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// mimalloc, with the limit named when it cannot allocate.
pub struct NamedLimit;

static MESSAGE: OnceLock<&'static str> = OnceLock::new();
static WRITTEN: AtomicBool = AtomicBool::new(false);

/// Sets the text written to standard error when an allocation fails. Call it
/// once, early in `main`; later calls are ignored.
pub fn prepare(message: String) {
    let _ = MESSAGE.set(Box::leak(message.into_boxed_str()));
}

fn report_failure() {
    // Only once: after the first failure the process is about to abort, and
    // other threads failing meanwhile should not repeat the text.
    if WRITTEN.swap(true, Ordering::Relaxed) {
        return;
    }
    if let Some(message) = MESSAGE.get() {
        let _ = rustix::io::write(rustix::stdio::stderr(), message.as_bytes());
    }
}

fn checked(pointer: *mut u8) -> *mut u8 {
    if pointer.is_null() {
        report_failure();
    }
    pointer
}

// SAFETY: every method forwards its arguments unchanged to mimalloc's own
// `GlobalAlloc`, whose contract is the same; the only addition runs after
// mimalloc has returned and touches no memory it manages.
unsafe impl GlobalAlloc for NamedLimit {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        checked(unsafe { mimalloc::MiMalloc.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        checked(unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) })
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        checked(unsafe { mimalloc::MiMalloc.realloc(pointer, layout, new_size) })
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(pointer, layout) }
    }
}
