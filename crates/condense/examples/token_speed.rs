//! Token estimate of a whole API history against parsing the same bytes with serde_json.
//!
//! `cargo run --release -p roo-condense --example token_speed [api_conversation_history.json]`
//!
//! Without an argument it reads a real task of the legacy fixtures in `../shared`; when they are
//! absent it says so and exits 0 (an error with `ROO_STATE_REQUIRE_SHARED=1`), as the tests do.

use std::time::Instant;

/// The API history read when none is given: a long real task of the legacy fixtures.
const DEFAULT_HISTORY: &str = "fixtures/legacy-tasks/real-tasks/ac8aa7b4-319c-4925-a139-4f4adca81921/api_conversation_history.json";

fn main() {
    let path = match std::env::args().nth(1) {
        Some(p) => p,
        None => match roo_corpus::shared::shared_fixture(DEFAULT_HISTORY, "token_speed") {
            Some(p) => p.display().to_string(),
            None => return,
        },
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let parse = || serde_json::from_str::<Vec<serde_json::Value>>(&text);
    let messages = match parse() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{path} is not a JSON array: {e}");
            std::process::exit(2);
        }
    };
    let blocks = roo_condense::history::blocks_of(&messages);
    let t = Instant::now();
    roo_condense::tokens::warm_up();
    let warm = t.elapsed();
    let rounds = 10;
    let t = Instant::now();
    let mut tokens = 0.0;
    for _ in 0..rounds {
        tokens = roo_condense::count_tokens(&blocks);
    }
    let count = t.elapsed() / rounds;
    let t = Instant::now();
    for _ in 0..rounds {
        let _ = parse();
    }
    let base = t.elapsed() / rounds;
    println!(
        "{} blocks, {} bytes: {tokens} tokens in {:.2} ms (encoder built in {:.0} ms); serde_json parse {:.2} ms; ratio {:.1}x; {:.1} MB/s",
        blocks.len(),
        text.len(),
        count.as_secs_f64() * 1e3,
        warm.as_secs_f64() * 1e3,
        base.as_secs_f64() * 1e3,
        count.as_secs_f64() / base.as_secs_f64(),
        text.len() as f64 / count.as_secs_f64() / 1e6
    );
}
