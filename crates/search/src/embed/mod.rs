//! Embedders behind one trait: an OpenAI-compatible HTTP service, a sentence model run in-process,
//! a static model distilled from it, or none (lexical search only).

#[cfg(feature = "local-model")]
pub mod distill;
pub mod http;
#[cfg(feature = "local-model")]
pub mod local;
pub mod pca;
#[cfg(feature = "local-model")]
pub mod static_model;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What made the dense vectors of an index. Two indexes can share vectors only if these match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "EmbedderInfo"))]
pub struct EmbedderId {
    /// `local`, `static`, `http` or `none`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "\"local\" | \"static\" | \"http\" | \"none\"")
    )]
    pub kind: String,
    /// The model name (`all-MiniLM-L6-v2`, `text-embedding-3-small`, …); `bm25` for `none`.
    pub model: String,
    /// Dense dimensions; 0 when there are no dense vectors.
    pub dimension: usize,
}

impl EmbedderId {
    pub fn none() -> Self {
        Self {
            kind: "none".to_owned(),
            model: "bm25".to_owned(),
            dimension: 0,
        }
    }

    pub fn is_dense(&self) -> bool {
        self.dimension > 0
    }

    /// Same vectors: same model and dimension (the transport may differ).
    pub fn same_vectors(&self, other: &EmbedderId) -> bool {
        self.model == other.model && self.dimension == other.dimension
    }
}

impl std::fmt::Display for EmbedderId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_dense() {
            write!(
                f,
                "{} model {} ({} dimensions)",
                self.kind, self.model, self.dimension
            )
        } else {
            write!(f, "no embedding model (lexical vectors only)")
        }
    }
}

/// Whether a text is indexed or searched for (some models treat them differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Document,
    Query,
}

/// Something that turns texts into dense vectors.
pub trait Embedder: Send + Sync {
    /// The model and its dimension (may ask the service once).
    fn id(&self) -> Result<EmbedderId>;
    /// One vector per text, in order, each of `id().dimension` values.
    fn embed(&self, texts: &[&str], purpose: Purpose) -> Result<Vec<Vec<f32>>>;
    /// How many texts to hand over at once.
    fn batch_size(&self) -> usize {
        32
    }
}

/// No model: the index holds lexical vectors only.
pub struct NoEmbedder;

impl Embedder for NoEmbedder {
    fn id(&self) -> Result<EmbedderId> {
        Ok(EmbedderId::none())
    }
    fn embed(&self, texts: &[&str], _purpose: Purpose) -> Result<Vec<Vec<f32>>> {
        Ok(vec![Vec::new(); texts.len()])
    }
}

/// Progress of distilling the static model: vocabulary tokens done, tokens in all.
pub type DistillProgress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Which embedder to use.
#[derive(Clone, Default)]
pub enum EmbedderConfig {
    /// The static model distilled from the local model when that is installed (and built in;
    /// distilled on first use), else the local model itself, otherwise none.
    #[default]
    Auto,
    /// Lexical vectors only.
    None,
    /// all-MiniLM-L6-v2 from a model directory (default: the data directory's).
    Local { model_dir: Option<PathBuf> },
    /// The static model distilled from all-MiniLM-L6-v2 in a model directory (default: the data
    /// directory's), distilled on first use.
    Static { model_dir: Option<PathBuf> },
    /// An OpenAI-compatible `/v1/embeddings` service.
    Http(http::HttpConfig),
    /// An embedder supplied by the caller (Rust API only). Searches must pass it again.
    Custom(Arc<dyn Embedder>),
}

impl std::fmt::Debug for EmbedderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmbedderConfig::Auto => write!(f, "Auto"),
            EmbedderConfig::None => write!(f, "None"),
            EmbedderConfig::Local { model_dir } => write!(f, "Local({model_dir:?})"),
            EmbedderConfig::Static { model_dir } => write!(f, "Static({model_dir:?})"),
            EmbedderConfig::Http(c) => write!(f, "Http({})", c.endpoint()),
            EmbedderConfig::Custom(e) => write!(f, "Custom({:?})", e.id().ok()),
        }
    }
}

pub use roo_model::{default_model_dir, missing_model_file, LOCAL_MODEL, MODEL_FILES};
pub const LOCAL_DIMENSION: usize = 384;

/// Whether the local model can be used in this build and is installed.
pub fn local_model_available(dir: &Path) -> bool {
    cfg!(feature = "local-model") && missing_model_file(dir).is_none()
}

/// Build the embedder a configuration names.
pub fn build(config: &EmbedderConfig) -> Result<Arc<dyn Embedder>> {
    build_with_progress(config, None)
}

/// Build the embedder a configuration names, reporting the distillation of the static model when
/// it has to be made.
pub fn build_with_progress(
    config: &EmbedderConfig,
    progress: Option<DistillProgress<'_>>,
) -> Result<Arc<dyn Embedder>> {
    match config {
        EmbedderConfig::None => Ok(Arc::new(NoEmbedder)),
        EmbedderConfig::Auto => {
            let dir = default_model_dir();
            if local_model_available(&dir) {
                // A static model that cannot be made (a read-only model directory) leaves the
                // sentence model itself.
                build_static(&dir, progress).or_else(|_| build_local(&dir))
            } else {
                Ok(Arc::new(NoEmbedder))
            }
        }
        EmbedderConfig::Local { model_dir } => {
            let dir = model_dir.clone().unwrap_or_else(default_model_dir);
            build_local(&dir)
        }
        EmbedderConfig::Static { model_dir } => {
            let dir = model_dir.clone().unwrap_or_else(default_model_dir);
            build_static(&dir, progress)
        }
        EmbedderConfig::Http(cfg) => Ok(Arc::new(http::HttpEmbedder::new(cfg.clone())?)),
        EmbedderConfig::Custom(e) => Ok(e.clone()),
    }
}

/// The embedder that made an index, rebuilt from its id (the search side of an index).
pub fn for_index(
    id: &EmbedderId,
    http: Option<&http::HttpConfig>,
    model_dir: Option<&Path>,
) -> Result<Arc<dyn Embedder>> {
    match id.kind.as_str() {
        "none" => Ok(Arc::new(NoEmbedder)),
        "local" => match model_dir {
            Some(d) if missing_model_file(d).is_none() => build_local(d),
            _ => build_local(&default_model_dir()),
        },
        // Never distilled at search time: the index's vectors came from a saved file, and a
        // search with another file's vectors is refused by the caller (the digest is in the id).
        "static" => match model_dir {
            Some(d) if missing_model_file(d).is_none() => load_static(d),
            _ => load_static(&default_model_dir()),
        },
        "http" => {
            let mut cfg = http.cloned().unwrap_or_else(http::HttpConfig::from_env);
            if cfg.model.is_none() {
                cfg.model = Some(id.model.clone());
            }
            if cfg.dimensions.is_none() {
                cfg.dimensions = Some(id.dimension);
            }
            Ok(Arc::new(http::HttpEmbedder::new(cfg)?))
        }
        other => Err(Error::InvalidArgument(format!(
            "the index was built with a `{other}` embedder this build cannot recreate; pass the \
             same embedder to the search, or rebuild the index"
        ))),
    }
}

#[cfg(feature = "local-model")]
fn build_local(dir: &Path) -> Result<Arc<dyn Embedder>> {
    local::shared(dir).map(|m| m as Arc<dyn Embedder>)
}

#[cfg(feature = "local-model")]
fn build_static(dir: &Path, progress: Option<DistillProgress<'_>>) -> Result<Arc<dyn Embedder>> {
    distill::ensure(dir, progress).map(|m| m as Arc<dyn Embedder>)
}

#[cfg(feature = "local-model")]
fn load_static(dir: &Path) -> Result<Arc<dyn Embedder>> {
    if let Some(missing) = missing_model_file(dir) {
        return Err(Error::ModelMissing {
            dir: dir.to_path_buf(),
            missing: missing.to_owned(),
        });
    }
    match static_model::load_current(dir)? {
        Some(m) => Ok(m as Arc<dyn Embedder>),
        None => Err(Error::ModelLoad {
            dir: dir.to_path_buf(),
            message: format!(
                "{} is missing or was made from another model; run indexTasks to make it",
                static_model::STATIC_FILE
            ),
        }),
    }
}

#[cfg(not(feature = "local-model"))]
fn build_local(dir: &Path) -> Result<Arc<dyn Embedder>> {
    if let Some(missing) = missing_model_file(dir) {
        return Err(Error::ModelMissing {
            dir: dir.to_path_buf(),
            missing: missing.to_owned(),
        });
    }
    Err(Error::FeatureMissing {
        feature: "local-model",
    })
}

#[cfg(not(feature = "local-model"))]
fn build_static(dir: &Path, _progress: Option<DistillProgress<'_>>) -> Result<Arc<dyn Embedder>> {
    build_local(dir)
}

#[cfg(not(feature = "local-model"))]
fn load_static(dir: &Path) -> Result<Arc<dyn Embedder>> {
    build_local(dir)
}

/// Scale a vector to unit length (cosine and dot product then agree).
pub fn normalize(v: &mut [f32]) {
    let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        for x in v {
            *x /= n;
        }
    }
}
