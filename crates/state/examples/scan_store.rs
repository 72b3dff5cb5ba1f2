//! Cold scan of a task store next to a raw read of the same bytes.
//!
//! ```text
//! cargo run --release -p roo-state --example scan_store -- <tasks dir> [--runs N] [--threads N]
//! cargo run --release -p roo-state --example scan_store -- <tasks dir> --only raw|scan
//!     [--threads N] [--dump out.json]
//! ```
//!
//! Without `--only`, the example runs itself as child processes, alternating `--only raw` and
//! `--only scan` `N` times (default 3) after one warm-up raw read, and prints the medians, so the
//! peak RSS (VmHWM) of each is its own. The raw read reads, with `std::fs::read` on the same rayon
//! pool size as the scan, every file the scan reads (`ui_messages.json`, else
//! `claude_messages.json`; `api_conversation_history.json`; `history_item.json`;
//! `task_metadata.json`). The scan is `scan_tasks` with headers (no sequence, the binding's
//! default) and the hierarchy on; the hierarchy is then timed again alone. The CPU time (user +
//! system, whole process) is printed too: it is less sensitive to other load on the machine.
//! `--threads 0` (the default) means one worker per core, as the binding's default.

use rayon::prelude::*;
use roo_state::hierarchy::HierarchyOptions;
use roo_state::scan::{list_task_dirs, scan_tasks, ScanOptions};
use roo_state::skeleton::AnalyzeOptions;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU seconds (user + system) used by this process so far, from `/proc/self/stat` (100 Hz ticks).
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name (which is in parentheses and may hold spaces).
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let utime: f64 = f.get(11)?.parse().ok()?;
            let stime: f64 = f.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(f64::NAN)
}

fn pool(threads: usize) -> rayon::ThreadPool {
    let mut b = rayon::ThreadPoolBuilder::new();
    if threads > 0 {
        b = b.num_threads(threads);
    }
    b.build().expect("a thread pool")
}

fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let ui = dir.join("ui_messages.json");
    if ui.exists() {
        out.push(ui);
    } else {
        out.push(dir.join("claude_messages.json"));
    }
    for f in [
        "api_conversation_history.json",
        "history_item.json",
        "task_metadata.json",
    ] {
        out.push(dir.join(f));
    }
    out
}

fn run_raw(tasks: &Path, threads: usize) {
    let start = Instant::now();
    let (dirs, _) = list_task_dirs(tasks).expect("a tasks directory");
    let bytes: usize = pool(threads).install(|| {
        dirs.par_iter()
            .map(|(_, d)| {
                files_of(d)
                    .iter()
                    .map(|f| std::fs::read(f).map(|b| b.len()).unwrap_or(0))
                    .sum::<usize>()
            })
            .sum()
    });
    let secs = start.elapsed().as_secs_f64();
    println!(
        "RESULT raw secs={secs:.4} cpu={:.2} bytes={bytes} tasks={} hwm_kib={} threads={}",
        cpu_secs(),
        dirs.len(),
        vm_hwm_kib(),
        pool(threads).current_num_threads()
    );
}

fn run_scan(tasks: &Path, threads: usize, dump: Option<&str>) {
    let opts = ScanOptions {
        concurrency: threads,
        analyze: AnalyzeOptions {
            include_sequence: false,
            ..AnalyzeOptions::default()
        },
        hierarchy: Some(HierarchyOptions::default()),
        ..ScanOptions::default()
    };
    let start = Instant::now();
    let result = scan_tasks(tasks, &opts).expect("a scan");
    let secs = start.elapsed().as_secs_f64();
    let hwm = vm_hwm_kib();
    println!(
        "RESULT scan secs={secs:.4} cpu={:.2} skeletons={} hwm_kib={hwm} threads={}",
        cpu_secs(),
        result.skeletons.len(),
        pool(threads).current_num_threads()
    );
    if let Some(path) = dump {
        let json = serde_json::to_vec_pretty(&result).expect("serialisable");
        std::fs::write(path, json).expect("the dump is written");
    }
    // Phases: the hierarchy alone, on the skeletons just built.
    let skeletons = result.skeletons;
    let start = Instant::now();
    let (linked, _) =
        roo_state::hierarchy::reconstruct_hierarchy(skeletons, &HierarchyOptions::default());
    println!(
        "RESULT hierarchy secs={:.4} n={}",
        start.elapsed().as_secs_f64(),
        linked.len()
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn field(line: &str, key: &str) -> f64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

fn child(tasks: &str, only: &str, threads: usize) -> Vec<String> {
    let exe = std::env::current_exe().expect("the example's own path");
    let out = Command::new(exe)
        .args([tasks, "--only", only, "--threads", &threads.to_string()])
        .output()
        .expect("the child runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("RESULT"))
        .map(str::to_owned)
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tasks = args
        .first()
        .cloned()
        .unwrap_or_else(|| "/work/bench-store-5000/tasks".into());
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let threads: usize = opt("--threads").and_then(|t| t.parse().ok()).unwrap_or(0);
    match opt("--only").as_deref() {
        Some("raw") => return run_raw(Path::new(&tasks), threads),
        Some("scan") => return run_scan(Path::new(&tasks), threads, opt("--dump").as_deref()),
        _ => {}
    }
    let runs: usize = opt("--runs").and_then(|t| t.parse().ok()).unwrap_or(3);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load before: {}", load.trim());
    // Warm the page cache once so both sides read from memory.
    let _ = child(&tasks, "raw", threads);
    let (mut raw, mut scan, mut hier, mut raw_hwm, mut scan_hwm) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut raw_cpu, mut scan_cpu) = (vec![], vec![]);
    let mut info = String::new();
    for i in 0..runs {
        let r = child(&tasks, "raw", threads);
        let s = child(&tasks, "scan", threads);
        let rl = r.first().cloned().unwrap_or_default();
        let sl = s.first().cloned().unwrap_or_default();
        let hl = s.get(1).cloned().unwrap_or_default();
        println!("run {i}: {rl}\n       {sl}\n       {hl}");
        raw.push(field(&rl, "secs"));
        raw_hwm.push(field(&rl, "hwm_kib"));
        raw_cpu.push(field(&rl, "cpu"));
        scan_cpu.push(field(&sl, "cpu"));
        scan.push(field(&sl, "secs"));
        scan_hwm.push(field(&sl, "hwm_kib"));
        hier.push(field(&hl, "secs"));
        info = rl;
    }
    let ratios: Vec<f64> = raw.iter().zip(&scan).map(|(r, s)| s / r).collect();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load after: {}", load.trim());
    println!(
        "raw read:  median {:.3} s, {:.2} CPU s ({:.0} MiB, threads {}), peak RSS {:.1} MiB",
        median(raw.clone()),
        median(raw_cpu),
        field(&info, "bytes") / 1048576.0,
        field(&info, "threads"),
        median(raw_hwm) / 1024.0
    );
    println!(
        "scan+hier: median {:.3} s, {:.2} CPU s, peak RSS {:.1} MiB (hierarchy alone {:.3} s)",
        median(scan.clone()),
        median(scan_cpu),
        median(scan_hwm) / 1024.0,
        median(hier)
    );
    println!(
        "ratio scan / raw: median {:.2}x (per run: {:?})",
        median(ratios.clone()),
        ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>()
    );
}
