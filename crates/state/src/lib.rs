//! Conversation skeletons, task scanning and the parent/child hierarchy.

pub mod hierarchy;
pub mod scan;
pub mod skeleton;
/// `Date#toISOString` of a millisecond timestamp, under the path roo-search names it by; the one
/// implementation is `roo_js::iso_from_ms`.
pub mod time {
    pub use roo_js::iso_from_ms;
}

pub use scan::{scan_tasks, ScanOptions, ScanResult};
pub use skeleton::{analyze_task, AnalyzeOptions, ConversationSkeleton};
