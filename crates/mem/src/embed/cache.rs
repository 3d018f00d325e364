//! The optimised model, kept in the model folder so that a new process loads it cheaply.
//!
//! ONNX Runtime optimises `model.onnx` each time a session is created: it folds the int8
//! weights into float ones (about 90 MB from 23 MB) and builds them in fresh memory, which is
//! most of the cost of a whole-process recall. The graph it ends with is saved once, here, as
//! `graph.onnx` with the weights in `weights.bin`; a later session reads the small graph and
//! ONNX Runtime maps the weights from the file (pages shared with the page cache, only the
//! ones used are touched), and the result is the same model: the same vectors, bit for bit
//! (a session that skips prepacking, as the first one from the cache does, differs in the last
//! bits: see `LIGHT_TEXTS`).
//!
//! Layout: `<model folder>/optimized/<key>/{graph.onnx, weights.bin, manifest}`, where the key
//! is a hash of the size and modification time of every model file, of the ONNX Runtime
//! library and of the CPU features (a graph optimised at the highest level may use kernels of
//! this CPU). The manifest, written last, holds the model checksum and the vector length, so a
//! load that finds it reads neither `model.onnx` nor runs a probe; it also holds the sizes of
//! both files and a hash of the graph, checked on every load (the 90 MB of weights are not
//! hashed each time: that would cost more than it saves). A folder is built under a
//! temporary name and renamed into place whole; one that does not load is removed and built
//! again; a model folder that cannot be written is simply used without a cache.
//!
//! The cache lives beside the model, never in a memory root: a root may come from a cloned
//! repository, and nothing in it is loaded as code or as a model (docs/security.md).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use fastembed::TokenizerFiles;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;

use super::{Embedder, MAX_TOKENS, MODEL_FILE, ModelSource, TOKENIZER_FILES};

/// The folder, inside the model folder, that holds the optimised models.
pub const CACHE_DIR: &str = "optimized";
/// First line of a manifest; a change of layout changes it.
const FORMAT: &str = "mem-optimized-model 1";
const GRAPH_FILE: &str = "graph.onnx";
const WEIGHTS_FILE: &str = "weights.bin";
const MANIFEST_FILE: &str = "manifest";
/// Prefix of a folder being built.
const BUILDING: &str = ".building-";

/// The cache key of `source`: a hash of the size and modification time of each model file and
/// of the runtime, and of the CPU features; `None` if a file cannot be looked at (the load
/// then reads the files and says what is wrong).
pub(super) fn key(source: &ModelSource) -> Option<String> {
    let mut h = blake3::Hasher::new();
    h.update(format!("{FORMAT}\npooling=mean max_tokens={MAX_TOKENS}\n").as_bytes());
    let files = std::iter::once(MODEL_FILE).chain(TOKENIZER_FILES).map(|f| source.dir.join(f));
    for path in files.chain([source.runtime.clone()]) {
        let meta = std::fs::metadata(&path).ok()?;
        h.update(path.file_name()?.as_encoded_bytes());
        h.update(&meta.len().to_le_bytes());
        h.update(&crate::store::mtime_ns(&meta).to_le_bytes());
    }
    h.update(source.runtime.as_os_str().as_encoded_bytes());
    h.update(cpu_features().as_bytes());
    Some(h.finalize().to_hex()[..32].to_string())
}

/// The CPU features ONNX Runtime picks its kernels by.
fn cpu_features() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let features = [
            ("sse4.1", std::arch::is_x86_feature_detected!("sse4.1")),
            ("avx", std::arch::is_x86_feature_detected!("avx")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("f16c", std::arch::is_x86_feature_detected!("f16c")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            ("avx512bw", std::arch::is_x86_feature_detected!("avx512bw")),
            ("avx512vl", std::arch::is_x86_feature_detected!("avx512vl")),
            ("avx512vnni", std::arch::is_x86_feature_detected!("avx512vnni")),
            ("avxvnni", std::arch::is_x86_feature_detected!("avxvnni")),
        ];
        features.iter().filter(|(_, on)| *on).map(|(name, _)| format!("{name} ")).collect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::env::consts::ARCH.to_string()
    }
}

/// A complete cache folder.
pub(super) struct Entry {
    /// The folder.
    pub dir: PathBuf,
    /// The optimised graph (the weights stay in their file).
    pub graph: Vec<u8>,
    /// The checksum of the model the graph was optimised from.
    pub checksum: [u8; 32],
    /// Length of the vectors.
    pub dim: usize,
}

impl Entry {
    /// The cache folder `key` of the model folder `model_dir`, if it is complete: a manifest
    /// that parses, and files of the sizes it names.
    pub fn read(model_dir: &Path, key: &str) -> Option<Entry> {
        let dir = model_dir.join(CACHE_DIR).join(key);
        let manifest = Manifest::parse(&std::fs::read_to_string(dir.join(MANIFEST_FILE)).ok()?)?;
        let weights = std::fs::metadata(dir.join(WEIGHTS_FILE)).ok()?.len();
        let graph = std::fs::read(dir.join(GRAPH_FILE)).ok()?;
        let graph_intact = graph.len() as u64 == manifest.graph
            && *blake3::hash(&graph).as_bytes() == manifest.graph_hash;
        if !graph_intact || weights != manifest.weights {
            return None;
        }
        Some(Entry { dir, graph, checksum: manifest.checksum, dim: manifest.dim })
    }
}

/// What a manifest says.
#[derive(Debug, PartialEq)]
struct Manifest {
    checksum: [u8; 32],
    dim: usize,
    /// Size of `graph.onnx`.
    graph: u64,
    /// blake3 of `graph.onnx` (small: the weights are in their own file).
    graph_hash: [u8; 32],
    /// Size of `weights.bin`.
    weights: u64,
}

impl Manifest {
    fn render(&self) -> String {
        let checksum = blake3::Hash::from_bytes(self.checksum).to_hex();
        let graph_hash = blake3::Hash::from_bytes(self.graph_hash).to_hex();
        format!(
            "{FORMAT}\nchecksum {checksum}\ndim {}\ngraph {}\ngraph_blake3 {graph_hash}\nweights {}\n",
            self.dim, self.graph, self.weights
        )
    }

    fn parse(text: &str) -> Option<Manifest> {
        let mut lines = text.lines();
        if lines.next()? != FORMAT {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix(' ');
        let checksum = *blake3::Hash::from_hex(field("checksum")?).ok()?.as_bytes();
        let dim = field("dim")?.parse().ok().filter(|&d| d > 0)?;
        let graph = field("graph")?.parse().ok()?;
        let graph_hash = *blake3::Hash::from_hex(field("graph_blake3")?).ok()?.as_bytes();
        let weights = field("weights")?.parse().ok()?;
        Some(Manifest { checksum, dim, graph, graph_hash, weights })
    }
}

/// Removes a cache folder that did not load (best effort: another process may have done it).
pub(super) fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// Builds the cache folder `key` for the model `onnx` and loads the embedder from it, so that
/// this process has exactly the model later ones will load. `None` if any step fails: the
/// caller then loads the model as it is, and reports what is wrong with it.
pub(super) fn build(
    source: &ModelSource,
    onnx: &[u8],
    files: &TokenizerFiles,
    key: &str,
    checksum: [u8; 32],
) -> Option<Embedder> {
    let root = source.dir.join(CACHE_DIR);
    std::fs::create_dir_all(&root).ok()?;
    // Unique among live processes; a folder of that name can only be left by a dead one.
    static BUILDS: AtomicU64 = AtomicU64::new(0);
    let n = BUILDS.fetch_add(1, Ordering::Relaxed);
    let building = root.join(format!("{BUILDING}{}-{n}", std::process::id()));
    remove(&building);
    std::fs::create_dir(&building).ok()?;
    let built = build_in(source, onnx, files, &building, checksum);
    if built.is_some() {
        let final_dir = root.join(key);
        if std::fs::rename(&building, &final_dir).is_err() {
            // A damaged folder of the same key is in the way (or one another process has
            // just put in place: its files are the same). A process that mapped the files of
            // a folder removed here keeps them until it exits.
            remove(&final_dir);
            let _ = std::fs::rename(&building, &final_dir);
        }
        remove_others(&root, key);
    }
    // Nothing left when it was renamed; a failed build's files otherwise.
    remove(&building);
    built
}

fn build_in(
    source: &ModelSource,
    onnx: &[u8],
    files: &TokenizerFiles,
    dir: &Path,
    checksum: [u8; 32],
) -> Option<Embedder> {
    save_optimized(source, onnx, dir).ok()?;
    let graph = std::fs::read(dir.join(GRAPH_FILE)).ok()?;
    let (graph_len, graph_hash) = (graph.len() as u64, *blake3::hash(&graph).as_bytes());
    let mut model = super::session(source, graph, files, Some(dir), true, None).ok()?;
    let dim = super::probe(source, &mut model).ok()?;
    let weights = std::fs::metadata(dir.join(WEIGHTS_FILE)).ok()?.len();
    let manifest = Manifest { checksum, dim, graph: graph_len, graph_hash, weights };
    std::fs::write(dir.join(MANIFEST_FILE), manifest.render()).ok()?;
    Some(Embedder { model, source: source.clone(), checksum, dim, light: None })
}

/// Has ONNX Runtime optimise `onnx` the way every session does (the highest level, which
/// fastembed sets) and write the result into `dir`, the weights in their own file.
fn save_optimized(source: &ModelSource, onnx: &[u8], dir: &Path) -> Result<(), String> {
    let environment = super::environment(&source.runtime).map_err(|e| e.to_string())?;
    let text = |e: ort::Error<ort::session::builder::SessionBuilder>| e.to_string();
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Session::builder(&environment)
            .map_err(|e| e.to_string())?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(text)?
            .with_intra_threads(1)
            .map_err(text)?
            .with_config_entry(
                "session.optimized_model_external_initializers_file_name",
                WEIGHTS_FILE,
            )
            .map_err(text)?
            .with_config_entry(
                "session.optimized_model_external_initializers_min_size_in_bytes",
                "1024",
            )
            .map_err(text)?
            .with_optimized_model_path(dir.join(GRAPH_FILE))
            .map_err(text)?
            .commit_from_memory(onnx)
            .map(drop)
            .map_err(|e| e.to_string())
    }));
    attempt.unwrap_or_else(|panic| Err(super::panic_text(&*panic)))
}

/// Removes the cache folders other than `key` (older models or runtimes), and folders left
/// half built by a process that died.
fn remove_others(root: &Path, key: &str) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stale = match name.strip_prefix(BUILDING) {
            // Left by a process that is no longer running (Linux: no /proc entry).
            Some(rest) => {
                rest.split('-').next().is_some_and(|pid| !Path::new("/proc").join(pid).exists())
            }
            None => name != key,
        };
        if stale && entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_reads_back_and_a_damaged_one_is_refused() {
        let m = Manifest {
            checksum: [7; 32],
            dim: 384,
            graph: 54618,
            graph_hash: [9; 32],
            weights: 90267648,
        };
        let text = m.render();
        assert_eq!(Manifest::parse(&text), Some(m));
        assert_eq!(Manifest::parse(&text.replace("dim 384", "dim 0")), None);
        assert_eq!(Manifest::parse(&text.replace("mem-optimized-model 1", "other")), None);
        assert_eq!(Manifest::parse(&text[..text.len() / 2]), None);
        assert_eq!(Manifest::parse(""), None);
    }

    #[test]
    fn the_key_follows_the_files_and_needs_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let source = ModelSource {
            dir: dir.path().to_path_buf(),
            runtime: dir.path().join("libonnxruntime.so"),
        };
        assert_eq!(key(&source), None);
        for name in std::iter::once(MODEL_FILE).chain(TOKENIZER_FILES) {
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        assert_eq!(key(&source), None, "no runtime yet");
        std::fs::write(&source.runtime, "lib").unwrap();
        let first = key(&source).unwrap();
        assert_eq!(key(&source).as_deref(), Some(first.as_str()));
        std::fs::write(dir.path().join(MODEL_FILE), "another model").unwrap();
        assert_ne!(key(&source).unwrap(), first);
    }
}
