//! Progress of an indexing run, with an estimate of the time left, and the embedder it uses
//! (whose first use may distil the static model, reported as its own phase).

use crate::embed::{self, Embedder, EmbedderConfig};
use crate::error::Result;
use serde::Serialize;
use std::sync::Arc;

/// Progress of an indexing run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexProgress {
    /// `distilling` (making the static model, once per model: `done`/`total` are vocabulary
    /// tokens), `scanning`, `indexing` or `finishing`.
    pub phase: &'static str,
    /// Tasks handled among those to index (tokens while distilling).
    pub done: usize,
    pub total: usize,
    pub chunks_embedded: usize,
    /// Time since the phase started, in ms.
    pub elapsed_ms: u64,
    /// Estimated time left in the phase, in ms, from the share of work done so far (the task
    /// files' bytes while indexing); `None` until something is done.
    pub eta_ms: Option<u64>,
}

/// The time left when `done` of `total` took `elapsed`.
pub(crate) fn eta(elapsed: std::time::Duration, done: u64, total: u64) -> Option<u64> {
    if done == 0 || total < done {
        return None;
    }
    let ms = elapsed.as_secs_f64() * 1000.0 * (total - done) as f64 / done as f64;
    Some(ms.round() as u64)
}

pub type ProgressFn<'a> = &'a (dyn Fn(&IndexProgress) + Sync);

/// The embedder `config` names, reporting a distillation as the phase `distilling`. The default
/// never fails: a local model that cannot be loaded leaves lexical vectors (and a note).
pub(crate) fn build_embedder(
    config: &EmbedderConfig,
    on_progress: Option<ProgressFn<'_>>,
    notes: &mut Vec<String>,
) -> Result<Arc<dyn Embedder>> {
    let start = std::time::Instant::now();
    let on_distill = |done: usize, total: usize| {
        if let Some(cb) = on_progress {
            cb(&IndexProgress {
                phase: "distilling",
                done,
                total,
                chunks_embedded: 0,
                elapsed_ms: start.elapsed().as_millis() as u64,
                eta_ms: eta(start.elapsed(), done as u64, total as u64),
            });
        }
    };
    match (
        config,
        embed::build_with_progress(config, Some(&on_distill)),
    ) {
        (_, Ok(e)) => Ok(e),
        (EmbedderConfig::Auto, Err(e)) => {
            notes.push(format!(
                "the local embedding model could not be used ({e}); lexical vectors only"
            ));
            Ok(Arc::new(embed::NoEmbedder))
        }
        (_, Err(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::eta;
    use std::time::Duration;

    #[test]
    fn the_time_left_follows_the_share_done() {
        assert_eq!(eta(Duration::from_secs(2), 0, 10), None);
        assert_eq!(eta(Duration::from_secs(2), 1, 5), Some(8_000));
        assert_eq!(eta(Duration::from_secs(2), 10, 10), Some(0));
        assert_eq!(eta(Duration::from_secs(2), 11, 10), None);
    }
}
