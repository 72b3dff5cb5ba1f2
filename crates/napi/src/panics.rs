//! Panics inside the engine: caught where the binding runs core work ([`caught`]), and reported
//! as one coded error (`INTERNAL`, with the panic's message and place) instead of the process's
//! default report. The default report, with its backtrace, is printed only when `RUST_BACKTRACE`
//! asks for it: a panic a core crate catches itself (Qdrant Edge's on a damaged index, turned into
//! an error by `roo-search`) then prints nothing, and the error it becomes is the one line said.

use crate::error::{CodedError, ErrorCode};
use std::sync::Mutex;

/// The message and place of the last panic, as the hook saw it (a panic on a worker thread
/// reaches the thread that catches it without its place).
static LAST: Mutex<Option<(String, String)>> = Mutex::new(None);

/// The text of a panic's payload.
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

/// Install the hook (once, when the addon is loaded).
pub(crate) fn install() {
    let verbose = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut last) = LAST.lock() {
            *last = Some((payload_text(info.payload()), place));
        }
        if verbose {
            default(info);
        }
    }));
}

/// Run `f`; a panic inside it becomes an `INTERNAL` error of one line naming its message and place.
pub(crate) fn caught<T>(f: impl FnOnce() -> Result<T, CodedError>) -> Result<T, CodedError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload_text(payload.as_ref());
        let place = LAST
            .lock()
            .ok()
            .and_then(|mut l| l.take())
            .filter(|(m, _)| *m == message)
            .map(|(_, p)| format!(" at {p}"))
            .unwrap_or_default();
        let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
        Err(CodedError::new(
            ErrorCode::Internal,
            format!(
                "the engine failed unexpectedly ({line}{place}); please report it \
                 (RUST_BACKTRACE=1 prints the backtrace)"
            ),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_one_coded_line() {
        install();
        let r: Result<(), CodedError> = caught(|| panic!("bad page\nsecond line"));
        let e = r.err().unwrap_or_else(|| panic!("not caught"));
        assert_eq!(e.code, ErrorCode::Internal);
        assert!(!e.message.contains('\n'), "{}", e.message);
        assert!(e.message.contains("bad page second line"), "{}", e.message);
        assert!(e.message.contains("panics.rs:"), "{}", e.message);
        assert!(caught(|| Ok::<_, CodedError>(7)).is_ok_and(|v| v == 7));
    }
}
