//! Stores whose conversations share a small vocabulary, as orchestration logs do (the same few
//! domain words in different orders), with labelled exact phrases: the test bed of phrase search,
//! where word counts (BM25) and embeddings cannot tell tasks apart and only word order can.
//!
//! Each task (v3.49+ layout: `ui_messages.json`, `api_conversation_history.json`,
//! `history_item.json`) has a first message and two assistant replies of words drawn from the
//! first [`VocabularySpec::words`] words of [`DOMAIN_WORDS`]. For every
//! [`VocabularySpec::phrase_every`]-th task, a run of [`VocabularySpec::phrase_words`] consecutive
//! words of its first message that stands in no other task becomes a labelled phrase.

use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::fs;
use std::io;
use std::path::Path;

/// The domain words, in the order a smaller vocabulary takes them.
pub const DOMAIN_WORDS: [&str; 32] = [
    "deploy",
    "cluster",
    "staging",
    "token",
    "cache",
    "refresh",
    "schema",
    "migration",
    "worker",
    "queue",
    "invoice",
    "ledger",
    "gateway",
    "retry",
    "timeout",
    "payload",
    "webhook",
    "tenant",
    "shard",
    "replica",
    "billing",
    "export",
    "audit",
    "report",
    "sync",
    "backup",
    "index",
    "metrics",
    "alert",
    "session",
    "upload",
    "config",
];

/// What [`generate_vocabulary_store`] writes.
#[derive(Debug, Clone)]
pub struct VocabularySpec {
    pub tasks: usize,
    pub seed: u64,
    /// Distinct words (at most [`DOMAIN_WORDS`]'s length).
    pub words: usize,
    /// Words of a first message.
    pub message_words: usize,
    /// Words of a labelled phrase.
    pub phrase_words: usize,
    /// One task in this many gets a labelled phrase.
    pub phrase_every: usize,
}

impl Default for VocabularySpec {
    fn default() -> Self {
        VocabularySpec {
            tasks: 150,
            seed: 7,
            words: 20,
            message_words: 48,
            phrase_words: 10,
            phrase_every: 4,
        }
    }
}

/// A labelled phrase: the words, and the task whose first message holds them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelledPhrase {
    pub task_id: String,
    pub phrase: String,
}

struct Task {
    id: String,
    ts: u64,
    first: String,
    replies: [String; 2],
}

/// Write the store under `out_dir/tasks` and return its labelled phrases.
pub fn generate_vocabulary_store(
    out_dir: &Path,
    spec: &VocabularySpec,
) -> io::Result<Vec<LabelledPhrase>> {
    let vocab = &DOMAIN_WORDS[..spec.words.clamp(2, DOMAIN_WORDS.len())];
    let mut rng = Rng::new(spec.seed);
    let sentence = |rng: &mut Rng, n: usize| -> String {
        let words: Vec<&str> = (0..n).map(|_| rng.pick(vocab)).collect();
        words.join(" ")
    };
    let start_ms = 1_767_225_600_000u64; // 2026-01-01
    let tasks: Vec<Task> = (0..spec.tasks)
        .map(|i| {
            let ts = start_ms + i as u64 * 3_600_000 + rng.below(600_000);
            Task {
                id: rng.uuid_v7(ts),
                ts,
                first: sentence(&mut rng, spec.message_words),
                replies: [sentence(&mut rng, 30), sentence(&mut rng, 30)],
            }
        })
        .collect();
    let every_text = |t: &Task| format!("{} | {} | {}", t.first, t.replies[0], t.replies[1]);
    let texts: Vec<String> = tasks.iter().map(every_text).collect();
    let mut labels = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        if i % spec.phrase_every.max(1) != 0 {
            continue;
        }
        let words: Vec<&str> = t.first.split(' ').collect();
        let n = spec.phrase_words.min(words.len());
        let unique = (0..=words.len() - n)
            .map(|at| words[at..at + n].join(" "))
            .find(|p| {
                texts
                    .iter()
                    .enumerate()
                    .all(|(j, text)| j == i || !text.contains(p.as_str()))
            });
        if let Some(phrase) = unique {
            labels.push(LabelledPhrase {
                task_id: t.id.clone(),
                phrase,
            });
        }
    }
    let tasks_dir = out_dir.join("tasks");
    for (i, t) in tasks.iter().enumerate() {
        write_task(&tasks_dir, i, t)?;
    }
    Ok(labels)
}

fn write_task(tasks_dir: &Path, i: usize, t: &Task) -> io::Result<()> {
    let dir = tasks_dir.join(&t.id);
    fs::create_dir_all(&dir)?;
    let workspace = format!("/home/dev/ops-{}", i % 3);
    let ui = json!([
        {"ts": t.ts, "type": "say", "say": "text", "text": t.first},
        {"ts": t.ts + 1_000, "type": "say", "say": "api_req_started",
         "text": "{\"apiProtocol\":\"anthropic\",\"tokensIn\":900,\"tokensOut\":120,\"cost\":0.004}"},
        {"ts": t.ts + 5_000, "type": "say", "say": "text", "text": t.replies[0]},
        {"ts": t.ts + 9_000, "type": "say", "say": "completion_result", "text": t.replies[1]},
    ]);
    let api = json!([
        {"role": "user", "ts": t.ts,
         "content": [{"type": "text", "text": format!("<user_message>\n{}\n</user_message>", t.first)}]},
        {"role": "assistant", "ts": t.ts + 5_000,
         "content": [{"type": "text", "text": t.replies[0]}]},
        {"role": "assistant", "ts": t.ts + 9_000,
         "content": [{"type": "text", "text": t.replies[1]}]},
    ]);
    let item = json!({
        "id": t.id, "number": i + 1, "ts": t.ts + 9_000, "task": t.first,
        "tokensIn": 900, "tokensOut": 120, "totalCost": 0.004, "workspace": workspace,
        "mode": "code", "status": "completed",
    });
    let write = |name: &str, v: &serde_json::Value| {
        let text = serde_json::to_string(v).map_err(io::Error::other)?;
        fs::write(dir.join(name), text)
    };
    write("ui_messages.json", &ui)?;
    write("api_conversation_history.json", &api)?;
    write("history_item.json", &item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_are_deterministic_and_stand_in_their_task_only() {
        let spec = VocabularySpec {
            tasks: 40,
            ..VocabularySpec::default()
        };
        let (a, b) = (
            tempfile::tempdir().expect("tmp"),
            tempfile::tempdir().expect("tmp"),
        );
        let labels = generate_vocabulary_store(a.path(), &spec).expect("write");
        assert_eq!(
            labels,
            generate_vocabulary_store(b.path(), &spec).expect("write")
        );
        assert!(labels.len() >= 8, "{}", labels.len());
        let tasks = a.path().join("tasks");
        let mut texts = Vec::new();
        for e in fs::read_dir(&tasks).expect("tasks") {
            let e = e.expect("entry");
            let ui = fs::read_to_string(e.path().join("ui_messages.json")).expect("ui");
            texts.push((e.file_name().to_string_lossy().into_owned(), ui));
        }
        assert_eq!(texts.len(), 40);
        for l in &labels {
            assert_eq!(l.phrase.split(' ').count(), spec.phrase_words);
            let holders: Vec<&str> = texts
                .iter()
                .filter(|(_, ui)| ui.contains(&l.phrase))
                .map(|(id, _)| id.as_str())
                .collect();
            assert_eq!(holders, vec![l.task_id.as_str()], "{}", l.phrase);
        }
    }
}
