//! `roo-corpus --out DIR --tasks N [--seed S] [--eras all|stack,native,...] [--target-mib M] [--traps]
//! [--strip-links] [--workspaces W] [--force]`
//! `roo-corpus --out DIR --tasks N --vocabulary W [--seed S] [--force]`: a store of W shared words
//! and its labelled phrases (`DIR/phrases.json`)

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use roo_corpus::vocabulary::{generate_vocabulary_store, VocabularySpec};
use roo_corpus::{generate_with_stats, CorpusSpec, Era};

const USAGE: &str = "usage: roo-corpus --out DIR --tasks N [--seed S] [--eras all|claude-dev,stack-old,stack,native,history-item,v2] \
[--target-mib M] [--traps] [--strip-links] [--workspaces W] [--vocabulary W] [--force]\n\
  --vocabulary W  tasks of W shared words and labelled exact phrases (DIR/phrases.json)\n\
  --force  remove DIR/tasks and DIR/truth.json first (otherwise DIR/tasks must be empty or absent)";

struct Args {
    out: PathBuf,
    spec: CorpusSpec,
    force: bool,
    vocabulary: Option<usize>,
}

fn parse() -> Result<Args, String> {
    let mut spec = CorpusSpec::default();
    let mut vocabulary = None;
    let mut out = None;
    let mut tasks = None;
    let mut force = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--tasks" => {
                tasks = Some(
                    value("--tasks")?
                        .parse::<usize>()
                        .map_err(|e| format!("--tasks: {e}"))?,
                )
            }
            "--seed" => {
                spec.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--eras" => spec.eras = Era::parse_list(&value("--eras")?)?,
            "--target-mib" => {
                let m: f64 = value("--target-mib")?
                    .parse()
                    .map_err(|e| format!("--target-mib: {e}"))?;
                spec.target_bytes = Some((m * 1_048_576.0) as u64);
            }
            "--workspaces" => {
                spec.workspaces = value("--workspaces")?
                    .parse()
                    .map_err(|e| format!("--workspaces: {e}"))?
            }
            "--vocabulary" => {
                vocabulary = Some(
                    value("--vocabulary")?
                        .parse::<usize>()
                        .map_err(|e| format!("--vocabulary: {e}"))?,
                )
            }
            "--traps" => spec.traps = true,
            "--strip-links" => spec.strip_stored_links = true,
            "--force" => force = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    spec.tasks = tasks.ok_or("--tasks is required")?;
    Ok(Args {
        out: out.ok_or("--out is required")?,
        spec,
        force,
        vocabulary,
    })
}

fn main() -> ExitCode {
    let Args {
        out,
        spec,
        force,
        vocabulary,
    } = match parse() {
        Ok(x) => x,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("roo-corpus: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let tasks_dir = out.join("tasks");
    if force {
        for r in [
            std::fs::remove_dir_all(&tasks_dir),
            std::fs::remove_file(out.join("truth.json")),
        ] {
            if let Err(e) = r {
                if e.kind() != std::io::ErrorKind::NotFound {
                    eprintln!("roo-corpus: cannot clean {}: {e}", out.display());
                    return ExitCode::FAILURE;
                }
            }
        }
    } else if std::fs::read_dir(&tasks_dir)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
    {
        eprintln!(
            "roo-corpus: {} is not empty (use --force to replace it)",
            tasks_dir.display()
        );
        return ExitCode::FAILURE;
    }
    let t0 = Instant::now();
    if let Some(words) = vocabulary {
        return write_vocabulary_store(&out, &spec, words);
    }
    match generate_with_stats(&out, &spec) {
        Ok((truth, stats)) => {
            let secs = t0.elapsed().as_secs_f64();
            let children = truth.tasks.iter().filter(|t| t.parent.is_some()).count();
            let trapped = truth.tasks.iter().filter(|t| !t.traps.is_empty()).count();
            println!(
                "roo-corpus: {} tasks ({} children, {} trapped), {:.1} MiB, top 18% of tasks = {:.1}% of bytes, {:.2} s -> {}",
                stats.tasks,
                children,
                trapped,
                stats.bytes as f64 / 1_048_576.0,
                stats.top_share(0.18) * 100.0,
                secs,
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("roo-corpus: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--vocabulary W`: the store and its labelled phrases as quoted queries (`DIR/phrases.json`).
fn write_vocabulary_store(out: &std::path::Path, spec: &CorpusSpec, words: usize) -> ExitCode {
    let vspec = VocabularySpec {
        tasks: spec.tasks,
        seed: spec.seed,
        words,
        ..VocabularySpec::default()
    };
    let written = generate_vocabulary_store(out, &vspec).and_then(|labels| {
        let queries: Vec<serde_json::Value> = labels
            .iter()
            .enumerate()
            .map(|(i, l)| {
                serde_json::json!({
                    "id": format!("phrase-{:02}", i + 1),
                    "query": format!("\"{}\"", l.phrase),
                    "expected": [l.task_id],
                })
            })
            .collect();
        let doc = serde_json::json!({
            "generator": format!("roo-corpus --tasks {} --seed {} --vocabulary {words}", spec.tasks, spec.seed),
            "queries": queries,
        });
        let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
        std::fs::write(out.join("phrases.json"), text + "\n")?;
        Ok(labels.len())
    });
    match written {
        Ok(n) => {
            println!(
                "roo-corpus: {} tasks of {words} words, {n} labelled phrases -> {}",
                spec.tasks,
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("roo-corpus: {e}");
            ExitCode::FAILURE
        }
    }
}
