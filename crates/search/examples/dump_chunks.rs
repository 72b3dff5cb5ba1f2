//! Print the chunks of every task of the given `tasks/` folders (to read what gets indexed).
//!
//! `cargo run -p roo-search --example dump_chunks -- <tasksDir>...`

use roo_search::chunk::{chunk_dialogue, extract_dialogue, ChunkOptions};

fn main() {
    for dir in std::env::args().skip(1) {
        let Ok((tasks, _)) = roo_state::scan::list_task_dirs(std::path::Path::new(&dir)) else {
            eprintln!("{dir}: not a tasks directory");
            continue;
        };
        for (id, path) in tasks {
            let d = extract_dialogue(&path);
            let chunks = chunk_dialogue(&d.messages, &ChunkOptions::default());
            println!(
                "=== {id} ({} messages from {}, {} chunks)",
                d.messages.len(),
                d.source_file,
                chunks.len()
            );
            for (i, c) in chunks.iter().enumerate() {
                println!(
                    "--- #{i} [{}] {:?}..{:?}\n{}",
                    c.role, c.first_ts, c.last_ts, c.text
                );
            }
        }
    }
}
