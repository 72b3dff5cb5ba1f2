//! A static embedding model distilled from the local sentence model: one fixed vector per
//! vocabulary token, so a document's vector is the normalised sum of its tokens' vectors (the
//! token vectors carry their weights). Thousands of chunks a second, no attention, no length
//! limit.
//!
//! Queries are short, so they go through the sentence model itself: its pooled output is
//! projected on the same principal components as the token vectors, which puts the query's
//! meaning in context (word order, other languages' subwords) in the documents' space. A query
//! costs one sentence-model pass (tens of ms); indexing never runs the sentence model.
//!
//! The vectors live in `static-256.bin` in the model directory, made once by
//! [`super::distill::distill`] and reused after. The file records the digest of the model it
//! came from and the method; a file made from another model or by another method is made again.
//!
//! File layout: the 8 bytes `RSTATIC1`, a little-endian `u32` header length, the JSON header
//! ([`StaticHeader`]), then little-endian `f32` values: the token vectors (`vocab × dims`, row by
//! row), the projection's mean (`hidden`) and its components (`hidden × dims`, row by row).

use super::local::LocalEmbedder;
use super::pca::Projection;
use super::{Embedder, EmbedderId, Purpose, LOCAL_MODEL};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tokenizers::Tokenizer;

/// The file name of the distilled vectors, in the model directory.
pub const STATIC_FILE: &str = "static-256.bin";
/// Dimensions kept by the principal component analysis.
pub const STATIC_DIMENSION: usize = 256;
/// The distillation method: changing how vectors are made changes this, so old files are redone.
pub const METHOD: &str = "cls-tok-sep-mean/pca256/log-rank/projected-query/v1";
const MAGIC: &[u8; 8] = b"RSTATIC1";

/// What the file says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaticHeader {
    /// xxh3-128 of the source model's `model.safetensors` and `tokenizer.json`, hex.
    pub source_digest: String,
    pub method: String,
    pub vocab: usize,
    pub dims: usize,
    /// The sentence model's dimensions (the projection's input).
    pub hidden: usize,
}

impl StaticHeader {
    /// How many `f32` values follow the header.
    fn values(&self) -> Option<usize> {
        let tokens = self.vocab.checked_mul(self.dims)?;
        let components = self.hidden.checked_mul(self.dims)?;
        tokens.checked_add(self.hidden)?.checked_add(components)
    }
}

pub struct StaticEmbedder {
    dir: PathBuf,
    tokenizer: Tokenizer,
    header: StaticHeader,
    vectors: Vec<f32>,
    projection: Projection,
    /// The sentence model, loaded by the first query.
    sentence: OnceLock<Arc<LocalEmbedder>>,
}

fn load_err(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::ModelLoad {
        dir: dir.to_path_buf(),
        message: e.to_string(),
    }
}

/// The digest of the files the distilled vectors depend on.
pub fn source_digest(dir: &Path) -> Result<String> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    for name in ["model.safetensors", "tokenizer.json"] {
        let path = dir.join(name);
        let mut f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        loop {
            let n = f.read(&mut buf).map_err(|e| Error::io(&path, e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

/// The tokenizer of `dir` without truncation, padding or special tokens' effects: every token of
/// a long chunk counts.
pub fn plain_tokenizer(dir: &Path) -> Result<Tokenizer> {
    let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
        .map_err(|e| load_err(dir, format!("tokenizer.json: {e}")))?;
    tokenizer
        .with_truncation(None)
        .map_err(|e| load_err(dir, format!("tokenizer truncation: {e}")))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

/// Write the distilled vectors and the projection to `path` (through a temporary file and a
/// rename).
pub fn write_file(
    path: &Path,
    header: &StaticHeader,
    vectors: &[f32],
    projection: &Projection,
) -> Result<()> {
    let shape_ok = vectors.len() == header.vocab * header.dims
        && projection.mean.len() == header.hidden
        && projection.k == header.dims
        && projection.components.len() == header.hidden * header.dims;
    if !shape_ok {
        return Err(Error::InvalidArgument(format!(
            "the vectors and projection do not have the shape {header:?} says"
        )));
    }
    let head = serde_json::to_vec(header).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let values = vectors.len() + projection.mean.len() + projection.components.len();
    let mut bytes = Vec::with_capacity(12 + head.len() + values * 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(head.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&head);
    for x in vectors
        .iter()
        .chain(&projection.mean)
        .chain(&projection.components)
    {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, &bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Read a distilled file: its header, token vectors and projection, checked for size.
pub fn read_file(path: &Path) -> Result<(StaticHeader, Vec<f32>, Projection)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let bad = |what: &str| load_err(path, format!("{}: {what}", path.display()));
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(bad("not a distilled vector file"));
    }
    let mut len = [0u8; 4];
    len.copy_from_slice(&bytes[8..12]);
    let head_len = u32::from_le_bytes(len) as usize;
    let head_end = 12usize
        .checked_add(head_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("header cut short"))?;
    let header: StaticHeader =
        serde_json::from_slice(&bytes[12..head_end]).map_err(|e| bad(&format!("header: {e}")))?;
    let body = &bytes[head_end..];
    if header.values().and_then(|n| n.checked_mul(4)) != Some(body.len()) || header.dims == 0 {
        return Err(bad("size does not match the header"));
    }
    let mut values = body
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let vectors: Vec<f32> = values.by_ref().take(header.vocab * header.dims).collect();
    let mean: Vec<f32> = values.by_ref().take(header.hidden).collect();
    let components: Vec<f32> = values.collect();
    let projection = Projection {
        mean,
        components,
        k: header.dims,
    };
    Ok((header, vectors, projection))
}

/// Size and modification time of the files a distilled model depends on (its own included): the
/// cached model is used again, without hashing the source model, while these stay the same.
fn stamp(dir: &Path) -> Vec<Option<(u64, std::time::SystemTime)>> {
    ["model.safetensors", "tokenizer.json", STATIC_FILE]
        .iter()
        .map(|f| {
            let md = std::fs::metadata(dir.join(f)).ok()?;
            Some((md.len(), md.modified().ok()?))
        })
        .collect()
}

/// The distilled models loaded, by directory, with the stamp of their files.
type Cache = Mutex<
    HashMap<
        PathBuf,
        (
            Vec<Option<(u64, std::time::SystemTime)>>,
            Arc<StaticEmbedder>,
        ),
    >,
>;

/// The distilled model of `dir`, loaded once per process. `None` when its file is missing or was
/// made from another model or by another method (then [`super::distill::distill`] makes it).
pub fn load_current(dir: &Path) -> Result<Option<Arc<StaticEmbedder>>> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let poisoned = || load_err(dir, "static model cache poisoned");
    let path = dir.join(STATIC_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let stamped = stamp(dir);
    if let Some((s, m)) = cache.lock().map_err(|_| poisoned())?.get(dir) {
        if *s == stamped && m.header.method == METHOD {
            return Ok(Some(m.clone()));
        }
    }
    let digest = source_digest(dir)?;
    let (header, vectors, projection) = match read_file(&path) {
        Ok(x) => x,
        // A damaged file is made again.
        Err(Error::ModelLoad { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    if header.source_digest != digest || header.method != METHOD {
        return Ok(None);
    }
    let m = StaticEmbedder::from_parts(dir, header, vectors, projection)?;
    if m.tokenizer.get_vocab_size(true) != m.header.vocab {
        return Ok(None);
    }
    let m = Arc::new(m);
    cache
        .lock()
        .map_err(|_| poisoned())?
        .insert(dir.to_path_buf(), (stamped, m.clone()));
    Ok(Some(m))
}

impl StaticEmbedder {
    /// A static model from vectors in memory (`header.vocab × header.dims`) and the projection
    /// of queries, with the tokenizer (and, for queries, the sentence model) of `dir`.
    pub fn from_parts(
        dir: &Path,
        header: StaticHeader,
        vectors: Vec<f32>,
        projection: Projection,
    ) -> Result<Self> {
        if vectors.len() != header.vocab * header.dims
            || projection.mean.len() != header.hidden
            || projection.components.len() != header.hidden * header.dims
        {
            return Err(load_err(dir, "vector count does not match the header"));
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            tokenizer: plain_tokenizer(dir)?,
            header,
            vectors,
            projection,
            sentence: OnceLock::new(),
        })
    }

    pub fn header(&self) -> &StaticHeader {
        &self.header
    }

    /// The vector of one token id (weighted, not normalised).
    pub fn token_vector(&self, id: u32) -> Option<&[f32]> {
        let d = self.header.dims;
        let start = (id as usize).checked_mul(d)?;
        self.vectors.get(start..start + d)
    }

    fn embed_ids(&self, ids: &[u32]) -> Vec<f32> {
        let mut v = vec![0f32; self.header.dims];
        for &id in ids {
            if let Some(t) = self.token_vector(id) {
                for (x, y) in v.iter_mut().zip(t) {
                    *x += y;
                }
            }
        }
        super::normalize(&mut v);
        v
    }

    /// Documents: the weighted sum of their token vectors.
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), false)
            .map_err(|e| load_err(&self.dir, format!("embedding failed: {e}")))?;
        Ok(encodings
            .iter()
            .map(|e| self.embed_ids(e.get_ids()))
            .collect())
    }

    /// Queries: the sentence model's pooled output, projected.
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let sentence = match self.sentence.get() {
            Some(m) => m.clone(),
            None => {
                let m = super::local::shared(&self.dir)?;
                self.sentence.get_or_init(|| m).clone()
            }
        };
        Ok(sentence
            .pooled_texts(texts)?
            .iter()
            .map(|v| {
                let mut y = self.projection.project(v);
                super::normalize(&mut y);
                y
            })
            .collect())
    }
}

/// The model name of a distilled model: the source model, the dimensions, the first 16 hex
/// digits of the source digest (another source model gives other vectors) and 8 of the method's
/// hash (another method too).
pub fn model_name(header: &StaticHeader) -> String {
    let short: String = header.source_digest.chars().take(16).collect();
    let method = xxhash_rust::xxh3::xxh3_64(header.method.as_bytes()) >> 32;
    format!("{LOCAL_MODEL}/static-{}-{short}-{method:08x}", header.dims)
}

impl Embedder for StaticEmbedder {
    fn id(&self) -> Result<EmbedderId> {
        Ok(EmbedderId {
            kind: "static".to_owned(),
            model: model_name(&self.header),
            dimension: self.header.dims,
        })
    }

    fn embed(&self, texts: &[&str], purpose: Purpose) -> Result<Vec<Vec<f32>>> {
        match purpose {
            Purpose::Document => self.embed_documents(texts),
            Purpose::Query => self.embed_queries(texts),
        }
    }

    fn batch_size(&self) -> usize {
        256
    }
}
