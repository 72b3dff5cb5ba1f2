//! Distil the local sentence model into a static model ([`super::static_model`]):
//!
//! 1. every vocabulary token goes through the model once, as `[CLS] token [SEP]`, and its output
//!    is mean-pooled (special and unused tokens get a zero vector);
//! 2. the token vectors are centred and projected on their 256 principal components;
//! 3. each token vector is scaled by a weight that grows with the token's rank (the vocabulary is
//!    in frequency order, so the rank stands in for the frequency: `w = ln(1 + rank)`, scaled to
//!    at most 1), so a sum of token vectors is a mean where frequent tokens count less.
//!
//! The projection (mean and components) is kept with the vectors: queries go through the
//! sentence model and are projected the same way.
//!
//! On two cores this takes about a minute, once per model.

use super::local::LocalEmbedder;
use super::pca::{symmetric_eigen, Projection};
use super::static_model::{self, StaticEmbedder, StaticHeader, METHOD, STATIC_DIMENSION};
use crate::error::{Error, Result};
use candle_core::{DType, Device, Tensor};
use std::path::Path;
use std::sync::Arc;

/// Tokens run through the model at once.
const BATCH: usize = 512;

pub use super::DistillProgress;

/// The distilled model of `dir`: the saved file when it matches the installed model, else made
/// now (and saved) from the sentence model.
pub fn ensure(dir: &Path, progress: Option<DistillProgress<'_>>) -> Result<Arc<StaticEmbedder>> {
    if let Some(m) = static_model::load_current(dir)? {
        return Ok(m);
    }
    // A model directory that cannot take the file fails now, not after a minute of distilling.
    let probe = dir.join(format!(".static-probe.{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| Error::io(&probe, e))?;
    let _ = std::fs::remove_file(&probe);
    distill(dir, progress)?;
    static_model::load_current(dir)?.ok_or_else(|| Error::ModelLoad {
        dir: dir.to_path_buf(),
        message: format!(
            "{} was written but cannot be read back",
            static_model::STATIC_FILE
        ),
    })
}

/// Make `static-256.bin` in `dir` from the sentence model there, replacing any older one.
pub fn distill(dir: &Path, progress: Option<DistillProgress<'_>>) -> Result<StaticHeader> {
    let model = super::local::shared(dir)?;
    let digest = static_model::source_digest(dir)?;
    let outputs = token_outputs(&model, progress)?;
    let (projection, reduced) =
        reduce(&outputs, STATIC_DIMENSION, Weighting::LogRank).map_err(|e| model_err(dir, &e))?;
    let header = StaticHeader {
        source_digest: digest,
        method: METHOD.to_owned(),
        vocab: outputs.vocab,
        dims: STATIC_DIMENSION,
        hidden: projection.mean.len(),
    };
    let path = dir.join(static_model::STATIC_FILE);
    static_model::write_file(&path, &header, &reduced, &projection)?;
    Ok(header)
}

/// How token vectors are weighted by their rank in the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Weighting {
    /// All text tokens alike.
    Flat,
    /// `a / (a + p(rank))`, `p` a Zipf law.
    Sif(f64),
    /// `ln(1 + rank)`, scaled to at most 1.
    LogRank,
}

/// The model's output for every vocabulary token.
pub struct TokenOutputs {
    /// `vocab × hidden`, row-major; zero for tokens not kept.
    pub raw: Vec<f32>,
    pub vocab: usize,
    /// Which tokens stand for text (not markers or unused slots).
    pub keep: Vec<bool>,
}

/// The token vectors reduced to `dims` principal components and weighted, and the projection.
pub fn reduce(
    outputs: &TokenOutputs,
    dims: usize,
    weighting: Weighting,
) -> candle_core::Result<(Projection, Vec<f32>)> {
    let vocab = outputs.vocab;
    let dim_in = outputs.raw.len().checked_div(vocab).unwrap_or(0);
    let (pca, mut reduced) = principal_components(&outputs.raw, dim_in, dims, &outputs.keep)?;
    let weights = rank_weights(&outputs.keep, weighting);
    for (row, w) in reduced.chunks_exact_mut(dims).zip(&weights) {
        for x in row {
            *x *= *w;
        }
    }
    Ok((pca, reduced))
}

fn model_err(dir: &Path, e: &dyn std::fmt::Display) -> Error {
    Error::ModelLoad {
        dir: dir.to_path_buf(),
        message: format!("distilling the static model failed: {e}"),
    }
}

/// Whether a vocabulary entry stands for text (not padding, markers or unused slots).
fn is_text_token(token: &str) -> bool {
    !(token.starts_with('[') && token.ends_with(']'))
}

/// The pooled model output of every vocabulary token.
pub fn token_outputs(
    model: &LocalEmbedder,
    progress: Option<DistillProgress<'_>>,
) -> Result<TokenOutputs> {
    let tokenizer = model.tokenizer();
    let vocab = tokenizer.get_vocab_size(true);
    let special = |name: &str| {
        tokenizer
            .token_to_id(name)
            .ok_or_else(|| model_err(model.dir(), &format!("the tokenizer has no {name} token")))
    };
    let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
    let keep: Vec<bool> = (0..vocab as u32)
        .map(|id| tokenizer.id_to_token(id).is_some_and(|t| is_text_token(&t)))
        .collect();
    let mut raw = Vec::with_capacity(vocab * super::LOCAL_DIMENSION);
    let ids: Vec<u32> = (0..vocab as u32).collect();
    for (n, group) in ids.chunks(BATCH).enumerate() {
        let seq: Vec<u32> = group.iter().flat_map(|&t| [cls, t, sep]).collect();
        let mask = vec![1u32; seq.len()];
        for (row, &t) in model
            .pooled(seq, mask, group.len(), 3)?
            .into_iter()
            .zip(group)
        {
            if keep[t as usize] {
                raw.extend(row);
            } else {
                raw.extend(std::iter::repeat_n(0.0, row.len()));
            }
        }
        if let Some(p) = progress {
            p((n * BATCH + group.len()).min(vocab), vocab);
        }
    }
    Ok(TokenOutputs { raw, vocab, keep })
}

/// The `k` principal components of the kept rows of `raw` (`rows × dim_in`).
fn fit(raw: &[f32], dim_in: usize, k: usize, keep: &[bool]) -> candle_core::Result<Projection> {
    let rows = keep.len();
    let kept = keep.iter().filter(|&&x| x).count().max(1);
    let mut mean = vec![0f64; dim_in];
    for (row, _) in raw.chunks_exact(dim_in).zip(keep).filter(|(_, &k)| k) {
        for (m, x) in mean.iter_mut().zip(row) {
            *m += f64::from(*x);
        }
    }
    let mean: Vec<f32> = mean.iter().map(|m| (m / kept as f64) as f32).collect();
    let x = Tensor::from_vec(centre(raw, &mean, keep), (rows, dim_in), &Device::Cpu)?;
    let cov = x.t()?.matmul(&x)?.to_dtype(DType::F64)?;
    let cov: Vec<f64> = cov.flatten_all()?.to_vec1()?;
    let cov: Vec<f64> = cov.iter().map(|c| c / kept as f64).collect();
    let (_, vectors) = symmetric_eigen(&cov, dim_in);
    let mut components = vec![0f32; dim_in * k];
    for c in 0..k.min(dim_in) {
        for r in 0..dim_in {
            components[r * k + c] = vectors[c * dim_in + r] as f32;
        }
    }
    Ok(Projection {
        mean,
        components,
        k,
    })
}

/// The rows minus `mean`; rows not kept become zero.
fn centre(raw: &[f32], mean: &[f32], keep: &[bool]) -> Vec<f32> {
    let mut centred = raw.to_vec();
    for (row, &k) in centred.chunks_exact_mut(mean.len()).zip(keep) {
        for (x, m) in row.iter_mut().zip(mean) {
            *x = if k { *x - m } else { 0.0 };
        }
    }
    centred
}

/// The kept rows of `raw` (`vocab × dim_in`) projected on their `k` principal components
/// (`vocab × k`; rows not kept stay zero), and the projection.
fn principal_components(
    raw: &[f32],
    dim_in: usize,
    k: usize,
    keep: &[bool],
) -> candle_core::Result<(Projection, Vec<f32>)> {
    let pca = fit(raw, dim_in, k, keep)?;
    let x = Tensor::from_vec(
        centre(raw, &pca.mean, keep),
        (keep.len(), dim_in),
        &Device::Cpu,
    )?;
    let w = Tensor::from_vec(pca.components.clone(), (dim_in, k), &Device::Cpu)?;
    let out = x.matmul(&w)?.flatten_all()?.to_vec1()?;
    Ok((pca, out))
}

/// The weight of each token from its rank among the text tokens (vocabulary order); for
/// [`Weighting::Sif`], `p = 1 / (rank · H)` (Zipf's law, `H` its normalising sum). Tokens not
/// kept weigh 0.
fn rank_weights(keep: &[bool], weighting: Weighting) -> Vec<f32> {
    let n = keep.iter().filter(|&&k| k).count();
    let h: f64 = (1..=n).map(|r| 1.0 / r as f64).sum::<f64>().max(1.0);
    let log_max = (1.0 + n as f64).ln().max(f64::MIN_POSITIVE);
    let mut rank = 0usize;
    keep.iter()
        .map(|&k| {
            if !k {
                return 0.0;
            }
            rank += 1;
            let r = rank as f64;
            let w = match weighting {
                Weighting::Flat => 1.0,
                Weighting::Sif(a) => a / (a + 1.0 / (r * h)),
                Weighting::LogRank => (1.0 + r).ln() / log_max,
            };
            w as f32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequent_tokens_weigh_less_and_markers_nothing() {
        let keep = [false, true, true, true, false, true];
        for weighting in [Weighting::LogRank, Weighting::Sif(1e-3)] {
            let w = rank_weights(&keep, weighting);
            assert_eq!((w[0], w[4]), (0.0, 0.0));
            assert!(w[1] < w[2] && w[2] < w[3] && w[3] < w[5], "{w:?}");
            assert!(w.iter().all(|x| (0.0..=1.0).contains(x)));
        }
        assert_eq!(
            rank_weights(&keep, Weighting::Flat),
            [0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
        );
    }

    #[test]
    fn markers_are_not_text() {
        assert!(!is_text_token("[CLS]") && !is_text_token("[unused12]"));
        assert!(is_text_token("the") && is_text_token("##ing") && is_text_token("["));
    }

    #[test]
    fn principal_components_keep_the_main_direction() {
        // Points along (1, 1, 0) with a little noise on z: the first component carries them.
        let raw: Vec<f32> = (0..20)
            .flat_map(|i| {
                let t = i as f32 - 10.0;
                [t, t, if i % 2 == 0 { 0.1 } else { -0.1 }]
            })
            .collect();
        let keep = vec![true; 20];
        let (_, out) = principal_components(&raw, 3, 2, &keep).expect("pca");
        assert_eq!(out.len(), 40);
        for (i, row) in out.chunks_exact(2).enumerate() {
            let t = i as f32 - 10.0 + 0.5;
            assert!(
                (row[0].abs() - t.abs() * 2f32.sqrt()).abs() < 1e-3,
                "{row:?}"
            );
            assert!(row[1].abs() < 0.2, "{row:?}");
        }
    }
}
