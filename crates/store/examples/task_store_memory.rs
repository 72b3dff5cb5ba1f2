//! Where the memory of an open task store handle goes: a counting allocator measures what the
//! open keeps (and its peak), what each part of the headers holds on the heap, and the tree.
//!
//!   cargo run --release -p roo-store --example task_store_memory -- <tasks folder> [cache dir]
//!
//! Without a cache dir a fresh temporary one is used (the first open builds it, a second open
//! reads it). Each part of a header is measured by cloning that part of every header and counting
//! what the clones allocate (a clone's strings are exactly as long as their text, so a part's
//! spare capacity is left out).

// A global allocator cannot be written without `unsafe`; this one only counts and passes on.
#![allow(unsafe_code)]

use roo_state::hierarchy::{self, HierarchyOptions, KeyMemo, TreeOptions};
use roo_store::task_store::{OpenOptions, TaskStore};
use roo_store::HostEnv;
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only the sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: a pointer this allocator gave out, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn mib(b: usize) -> String {
    format!("{:8.1} MiB", b as f64 / 1048576.0)
}

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Heap bytes the clones of one part of every header allocate (the clones' own vector left out).
fn heap_of<T: Clone>(parts: impl Iterator<Item = T>) -> usize {
    let before = live();
    let clones: Vec<T> = parts.collect();
    let outer = clones.capacity() * std::mem::size_of::<T>();
    let held = live() - before - outer;
    drop(clones);
    held
}

fn open(tasks: &Path, cache: &Path) -> TaskStore {
    TaskStore::open(
        &HostEnv::current(),
        &OpenOptions {
            tasks_dirs: vec![tasks.to_path_buf()],
            cache_root: Some(cache.to_path_buf()),
            ignore_stored_links: false,
            every_file: false,
        },
    )
    .unwrap_or_else(|e| panic!("open {}: {e}", tasks.display()))
}

/// The heap (and inline) bytes of each part of the headers.
fn parts(sk: &[roo_state::ConversationSkeleton]) -> Vec<(&'static str, usize)> {
    let inline = std::mem::size_of_val(sk);
    vec![
        ("header structs (inline part)", inline),
        (
            "ids (task, parent, root)",
            heap_of(sk.iter().map(|s| {
                (
                    s.task_id.clone(),
                    s.parent_task_id.clone(),
                    s.root_task_id.clone(),
                )
            })),
        ),
        (
            "metadata strings",
            heap_of(sk.iter().map(|s| s.metadata.clone())),
        ),
        (
            "instruction",
            heap_of(sk.iter().map(|s| s.instruction.clone())),
        ),
        (
            "truncatedInstruction",
            heap_of(sk.iter().map(|s| s.truncated_instruction.clone())),
        ),
        (
            "childTaskInstructionPrefixes",
            heap_of(sk.iter().map(|s| s.child_task_instruction_prefixes.clone())),
        ),
        (
            "childTasks (kept lean)",
            heap_of(sk.iter().map(|s| s.child_tasks.clone())),
        ),
        (
            "storedLinks",
            heap_of(sk.iter().map(|s| s.stored_links.clone())),
        ),
        (
            "parentEvidence",
            heap_of(sk.iter().map(|s| s.parent_evidence.clone())),
        ),
        ("files", heap_of(sk.iter().map(|s| s.files.clone()))),
        (
            "diagnostics",
            heap_of(sk.iter().map(|s| s.diagnostics.clone())),
        ),
    ]
}

/// The child calls whole (as a caller sees them): their messages, how many equal a task's own
/// instruction (the handle keeps those once), and their todos (kept as JSON text). Returns the
/// whole headers.
fn whole_calls(store: &TaskStore) -> Vec<roo_state::ConversationSkeleton> {
    let sk = store.skeletons();
    let n = sk.len();
    let whole: Vec<roo_state::ConversationSkeleton> =
        (0..n).filter_map(|i| store.whole(i)).collect();
    let calls: Vec<&roo_formats::extract::NewTaskInstruction> =
        whole.iter().flat_map(|s| s.child_tasks.iter()).collect();
    let instructions: HashSet<&str> = sk.iter().filter_map(|s| s.instruction.as_deref()).collect();
    let shared = calls
        .iter()
        .filter(|c| instructions.contains(c.message.as_str()))
        .count();
    let todo_text: usize = calls
        .iter()
        .filter_map(|c| c.todos.as_ref())
        .map(|t| serde_json::to_string(t).map_or(0, |j| j.len()))
        .sum();
    println!(
        "  whole child calls {}: messages {} ({shared} equal a task's instruction), todos {} ({} as JSON)",
        calls.len(),
        mib(heap_of(calls.iter().map(|c| c.message.clone()))),
        mib(heap_of(calls.iter().map(|c| c.todos.clone()))),
        mib(todo_text),
    );
    whole
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(tasks) = args.next().map(PathBuf::from) else {
        eprintln!("usage: task_store_memory <tasks folder> [cache dir]");
        std::process::exit(2);
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let cache = args
        .next()
        .map_or_else(|| tmp.path().join("cache"), PathBuf::from);

    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    let first = open(&tasks, &cache);
    let cold_peak = PEAK.load(Ordering::Relaxed) - base;
    drop(first);
    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    let store = open(&tasks, &cache);
    let warm_peak = PEAK.load(Ordering::Relaxed) - base;
    let kept = live() - base;
    let sk = store.skeletons();
    let n = sk.len();

    println!("{n} tasks, {}", tasks.display());
    println!("open, cold (cache built): peak {}", mib(cold_peak));
    println!("open, warm (cache read):  peak {}", mib(warm_peak));
    println!("kept by the open handle:       {}", mib(kept));
    let parts = parts(sk);
    let headers: usize = parts.iter().map(|p| p.1).sum();
    for (name, b) in &parts {
        println!(
            "  {name:32}{}  {:5.1} %  {:6.0} B/task",
            mib(*b),
            100.0 * *b as f64 / kept.max(1) as f64,
            *b as f64 / n.max(1) as f64
        );
    }
    println!(
        "  {:32}{}  {:5.1} %",
        "rest (metrics, lists, calls apart)",
        mib(kept.saturating_sub(headers)),
        100.0 * kept.saturating_sub(headers) as f64 / kept.max(1) as f64
    );
    let whole = whole_calls(&store);
    // Strings repeated across tasks: what interning them would save.
    let mut distinct: HashSet<&str> = HashSet::new();
    let mut repeated = 0usize;
    for s in sk {
        let m = &s.metadata;
        for v in [
            m.workspace.as_deref(),
            m.mode.as_deref(),
            Some(m.source.as_str()),
            Some(m.data_source.as_str()),
            s.files.ui_file.as_deref(),
            s.files.api_format.as_deref(),
        ]
        .into_iter()
        .flatten()
        {
            if !distinct.insert(v) {
                repeated += v.len();
            }
        }
    }
    println!(
        "  repeated workspace/mode/host/source/file strings: {} ({} distinct)",
        mib(repeated),
        distinct.len()
    );

    // The memo a handle keeps after its first hierarchy pass (an open from a current cache runs
    // none; the first refresh that changes something does).
    let mut memo = KeyMemo::default();
    let start = live();
    let copies = whole.clone();
    let before = live();
    PEAK.store(before, Ordering::Relaxed);
    let (linked, metrics) =
        hierarchy::reconstruct_hierarchy_with(copies, &HierarchyOptions::default(), &mut memo);
    let pass_peak = PEAK.load(Ordering::Relaxed) - before;
    drop((linked, metrics));
    println!(
        "memo after a hierarchy pass:   {}  (peak of the pass over the headers {})",
        mib(live().saturating_sub(start)),
        mib(pass_peak)
    );
    drop(memo);

    let before = live();
    PEAK.store(before, Ordering::Relaxed);
    let json = store.tree_json(&TreeOptions::default()).expect("tree");
    println!(
        "tree JSON kept:                {}  (peak while built {})",
        mib(json.len()),
        mib(PEAK.load(Ordering::Relaxed) - before)
    );
}
