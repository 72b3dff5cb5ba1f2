//! all-MiniLM-L6-v2 run in-process with candle: no network, 384 dimensions.
//!
//! The model directory holds `config.json`, `tokenizer.json` and `model.safetensors` (what
//! [`crate::fetch_model`] or `scripts/fetch-model.sh` unpacks). Texts are cut at 256 tokens (the model's
//! `max_seq_length`), token vectors are mean-pooled over the attention mask and the result is
//! normalised, which is what sentence-transformers does for this model.

use super::{Embedder, EmbedderId, Purpose, LOCAL_DIMENSION, LOCAL_MODEL};
use crate::error::{Error, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Longest input, in tokens.
const MAX_TOKENS: usize = 256;

pub struct LocalEmbedder {
    dir: PathBuf,
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

fn load_err(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::ModelLoad {
        dir: dir.to_path_buf(),
        message: e.to_string(),
    }
}

/// The model of `dir`, loaded once per process.
pub fn shared(dir: &Path) -> Result<Arc<LocalEmbedder>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<LocalEmbedder>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = dir.to_path_buf();
    if let Some(m) = cache
        .lock()
        .map_err(|_| load_err(dir, "model cache poisoned"))?
        .get(&key)
    {
        return Ok(m.clone());
    }
    let loaded = Arc::new(LocalEmbedder::load(dir)?);
    let mut guard = cache
        .lock()
        .map_err(|_| load_err(dir, "model cache poisoned"))?;
    Ok(guard.entry(key).or_insert(loaded).clone())
}

impl LocalEmbedder {
    pub fn load(dir: &Path) -> Result<Self> {
        if let Some(missing) = super::missing_model_file(dir) {
            return Err(Error::ModelMissing {
                dir: dir.to_path_buf(),
                missing: missing.to_owned(),
            });
        }
        let device = Device::Cpu;
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| Error::io(dir.join("config.json"), e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| load_err(dir, format!("config.json: {e}")))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| load_err(dir, format!("tokenizer.json: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| load_err(dir, format!("tokenizer truncation: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        let weights = std::fs::read(dir.join("model.safetensors"))
            .map_err(|e| Error::io(dir.join("model.safetensors"), e))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| load_err(dir, format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| load_err(dir, e))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            model,
            tokenizer,
            device,
        })
    }

    fn fail(&self, e: &dyn std::fmt::Display) -> Error {
        load_err(&self.dir, format!("embedding failed: {e}"))
    }

    /// The model directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tokenizer (cut at 256 tokens, batches padded to their longest text).
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = self.pooled_texts(texts)?;
        for v in &mut out {
            super::normalize(v);
        }
        Ok(out)
    }

    /// Mean-pooled (not normalised) model output of each text, cut at 256 tokens.
    pub fn pooled_texts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let inputs: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|e| self.fail(&e))?;
        let rows = encodings.len();
        let len = encodings.first().map_or(0, |e| e.get_ids().len());
        if rows == 0 || len == 0 {
            return Ok(vec![vec![0.0; LOCAL_DIMENSION]; texts.len()]);
        }
        let mut ids = Vec::with_capacity(rows * len);
        let mut mask = Vec::with_capacity(rows * len);
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        self.pooled(ids, mask, rows, len)
    }

    /// Mean-pooled (not normalised) model output of `rows` token id sequences of `len` ids each
    /// (row-major), over the positions `mask` keeps.
    pub fn pooled(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        rows: usize,
        len: usize,
    ) -> Result<Vec<Vec<f32>>> {
        let fail = |e: &dyn std::fmt::Display| self.fail(e);
        let ids = Tensor::from_vec(ids, (rows, len), &self.device).map_err(|e| fail(&e))?;
        let mask = Tensor::from_vec(mask, (rows, len), &self.device).map_err(|e| fail(&e))?;
        let type_ids = ids.zeros_like().map_err(|e| fail(&e))?;
        let hidden = self
            .model
            .forward(&ids, &type_ids, Some(&mask))
            .map_err(|e| fail(&e))?;
        // Mean over the tokens the mask keeps.
        let maskf = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(|e| fail(&e))?;
        let summed = hidden
            .broadcast_mul(&maskf)
            .and_then(|x| x.sum(1))
            .map_err(|e| fail(&e))?;
        let counts = maskf
            .sum(1)
            .and_then(|c| c.clamp(1e-9f32, f32::MAX))
            .map_err(|e| fail(&e))?;
        let pooled = summed.broadcast_div(&counts).map_err(|e| fail(&e))?;
        pooled.to_vec2().map_err(|e| fail(&e))
    }
}

impl Embedder for LocalEmbedder {
    fn id(&self) -> Result<EmbedderId> {
        Ok(EmbedderId {
            kind: "local".to_owned(),
            model: LOCAL_MODEL.to_owned(),
            dimension: LOCAL_DIMENSION,
        })
    }

    fn embed(&self, texts: &[&str], _purpose: Purpose) -> Result<Vec<Vec<f32>>> {
        // Similar lengths together: less padding, same results.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for group in order.chunks(self.batch_size()) {
            let batch: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            for (&i, v) in group.iter().zip(self.embed_batch(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn batch_size(&self) -> usize {
        16
    }
}
