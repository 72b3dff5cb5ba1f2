//! `cargo run -p roo-ts` writes the generated declarations under types/ and the JavaScript registry
//! `cli/lib/registry.generated.mjs` (and removes generated
//! files no area gives any more); `-- --check` only says whether the committed ones are current
//! (exit 1 when they are not).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let stale = roo_ts::stale(&root);
    if std::env::args().any(|a| a == "--check") {
        for path in &stale {
            eprintln!("{path} is not current: run `cargo run -p roo-ts`");
        }
        return if stale.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let fresh = roo_ts::render();
    for path in stale {
        let target = root.join(&path);
        let result = match fresh.iter().find(|(p, _)| *p == path) {
            Some((_, text)) => std::fs::write(&target, text),
            None => std::fs::remove_file(&target),
        };
        if let Err(e) = result {
            eprintln!("cannot update {}: {e}", target.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
