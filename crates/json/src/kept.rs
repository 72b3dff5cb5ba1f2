//! Buffers a thread keeps from one use to the next: a scan reads and rewrites the texts of one
//! task after another, and a buffer allocated and freed for each would be faulted in again,
//! zeroed, every time (freed memory goes back to the system at once).

use std::cell::Cell;
use std::thread::LocalKey;

/// A buffer a thread can keep, by the bytes it holds on to.
pub trait Kept: Default {
    fn kept_bytes(&self) -> usize;
}

impl Kept for String {
    fn kept_bytes(&self) -> usize {
        self.capacity()
    }
}

impl Kept for Vec<u8> {
    fn kept_bytes(&self) -> usize {
        self.capacity()
    }
}

/// `use_buffer` on the buffer this thread keeps in `slot`, as the last use left it. The buffer
/// is taken out while in use, so a nested use gets an empty one of its own; it is put back unless
/// it grew past `max` bytes, and then freed.
pub fn with_kept<B: Kept, R>(
    slot: &'static LocalKey<Cell<B>>,
    max: usize,
    use_buffer: impl FnOnce(&mut B) -> R,
) -> R {
    let mut buffer = slot.with(Cell::take);
    let out = use_buffer(&mut buffer);
    if buffer.kept_bytes() <= max {
        slot.with(|kept| kept.set(buffer));
    }
    out
}
