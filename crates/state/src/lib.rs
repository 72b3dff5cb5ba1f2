//! Conversation skeletons, task scanning and the parent/child hierarchy.

pub mod hierarchy;
pub mod scan;
pub mod skeleton;

pub use scan::{scan_tasks, ScanOptions, ScanResult};
pub use skeleton::{analyze_task, AnalyzeOptions, ConversationSkeleton};
