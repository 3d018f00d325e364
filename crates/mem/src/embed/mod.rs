//! Local sentence embeddings: an ONNX model (all-MiniLM-L6-v2 by default) run by fastembed on
//! ONNX Runtime, loaded from a folder on disk. Nothing here touches the network: the folder is
//! filled once by `scripts/fetch-model.sh`, and a folder that is missing, incomplete or broken
//! gives an [`EmbedError`] naming the file and the fix, never a panic.

mod cache;
mod loading;
mod tokens;
pub mod vectors;

pub use cache::CACHE_DIR;
pub use loading::Loading;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use ort::environment::Environment;

/// Environment variable naming the model folder; it overrides `[embed] model_dir`.
pub const MODEL_DIR_ENV: &str = "MEM_EMBED_MODEL_DIR";
/// Environment variable naming the ONNX Runtime library; it overrides the one in the folder.
pub const ORT_LIB_ENV: &str = "ORT_DYLIB_PATH";
/// The ONNX Runtime library looked for in the model folder.
pub const ORT_LIB_FILE: &str = "libonnxruntime.so";
/// The model file in the folder.
pub const MODEL_FILE: &str = "model.onnx";
/// The tokenizer files in the folder, in the order fastembed takes them.
pub const TOKENIZER_FILES: [&str; 4] =
    ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"];
/// Tokens per text the model reads; longer texts are cut (the model was trained at 256).
pub const MAX_TOKENS: usize = 256;

pub use crate::error::EmbedError;

/// Where the model comes from: the folder and the ONNX Runtime library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSource {
    /// The model folder (absolute).
    pub dir: PathBuf,
    /// The ONNX Runtime library (absolute).
    pub runtime: PathBuf,
}

/// The model the front end names (the CLI takes [`MODEL_DIR_ENV`] and [`ORT_LIB_ENV`], else
/// the user configuration file); a root's `mem.toml` never names one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelOverrides {
    /// The model folder, instead of `[embed] model_dir`.
    pub model_dir: Option<PathBuf>,
    /// The ONNX Runtime library, instead of the one in the model folder.
    pub runtime: Option<PathBuf>,
    /// Leave a loaded model to the process's exit instead of freeing it with its engine: for
    /// a process that ends soon (a hook, `mem recall`).
    pub leave_at_exit: bool,
}

impl ModelSource {
    /// The model the front end names, if any: the folder `overrides.model_dir`, the library
    /// `overrides.runtime`, else the one in the folder. A memory root never names one (its
    /// `mem.toml` could make `mem` load a library from a cloned repository).
    pub fn configured(overrides: &ModelOverrides) -> Option<ModelSource> {
        let dir = absolute(overrides.model_dir.as_deref()?);
        let runtime =
            overrides.runtime.as_deref().map(absolute).unwrap_or_else(|| dir.join(ORT_LIB_FILE));
        Some(ModelSource { dir, runtime })
    }
}

/// `path` made absolute against the current directory (ONNX Runtime resolves a relative
/// library path against the executable's folder, which is never what a user meant).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A loaded model, ready to embed.
pub struct Embedder {
    model: TextEmbedding,
    source: ModelSource,
    checksum: [u8; 32],
    dim: usize,
    /// Set while the model runs without prepacked weights (see [`LIGHT_TEXTS`]): the cache
    /// key to load the packed model from, and the texts embedded so far.
    light: Option<(String, usize)>,
}

/// A model loaded from the cache first runs without prepacked weights: ONNX Runtime would
/// otherwise copy every matrix into its packed layout at load (about 40 MB of fresh memory, a
/// quarter of a whole-process recall), which pays off over many texts but not for the one
/// query of a short-lived command. After this many texts the packed model is loaded in its
/// place. Both give the same vectors to within 1e-6 (only the order of the float sums
/// differs).
const LIGHT_TEXTS: usize = 4;

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("source", &self.source).field("dim", &self.dim).finish()
    }
}

/// The ONNX Runtime library this process loaded (it can load only one), or why it could not.
static RUNTIME: Mutex<Option<Result<PathBuf, String>>> = Mutex::new(None);

/// Loads ONNX Runtime from `path` once per process.
fn load_runtime(path: &Path) -> Result<(), EmbedError> {
    let mut loaded = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    let outcome = loaded.get_or_insert_with(|| {
        let attempt = std::panic::catch_unwind(|| ort::init_from(path).map(drop));
        match attempt {
            Ok(Ok(())) => Ok(path.to_path_buf()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(panic) => Err(panic_text(&*panic)),
        }
    });
    match outcome {
        Ok(first) if first == path => Ok(()),
        Ok(first) => Err(EmbedError::Runtime {
            path: path.to_path_buf(),
            message: format!("this process already loaded {}", first.display()),
        }),
        Err(message) => {
            Err(EmbedError::Runtime { path: path.to_path_buf(), message: message.clone() })
        }
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    crate::error::panic_message(panic, "the ONNX Runtime wrapper panicked")
}

/// The ONNX Runtime environment of this process, loading `source`'s runtime first: for a
/// session built outside [`Embedder`] in a process that also embeds (ONNX Runtime allows one
/// environment per process).
pub fn shared_environment(source: &ModelSource) -> Result<Environment, EmbedError> {
    load_runtime(&source.runtime)?;
    environment(&source.runtime)
}

/// The ONNX Runtime environment of this process, shared by every session (ONNX Runtime allows
/// one per process); [`load_runtime`] must have succeeded first.
fn environment(runtime: &Path) -> Result<Environment, EmbedError> {
    static ENVIRONMENT: Mutex<Option<Environment>> = Mutex::new(None);
    let mut shared = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(environment) = shared.as_ref() {
        return Ok(environment.clone());
    }
    let built = std::panic::catch_unwind(|| ort::init().build());
    let message = match built {
        Ok(Ok(environment)) => return Ok(shared.insert(environment).clone()),
        Ok(Err(e)) => e.to_string(),
        Err(panic) => panic_text(&*panic),
    };
    Err(EmbedError::Runtime { path: runtime.to_path_buf(), message })
}

/// The file `name` of the model folder `dir`.
fn read_model_file(dir: &Path, name: &str) -> Result<Vec<u8>, EmbedError> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(EmbedError::Missing { path, dir: dir.to_path_buf() })
        }
        Err(source) => Err(EmbedError::Io { path, source }),
    }
}

fn read_tokenizer_files(dir: &Path) -> Result<TokenizerFiles, EmbedError> {
    let [tokenizer, config, special, tokenizer_config] =
        TOKENIZER_FILES.map(|name| read_model_file(dir, name));
    Ok(TokenizerFiles {
        tokenizer_file: tokenizer?,
        config_file: config?,
        special_tokens_map_file: special?,
        tokenizer_config_file: tokenizer_config?,
    })
}

fn model_error(
    source: &ModelSource,
    what: &'static str,
    file: &str,
    message: String,
) -> EmbedError {
    EmbedError::Model { path: source.dir.join(file), dir: source.dir.clone(), what, message }
}

/// A fastembed model over the graph `onnx` and the tokenizer `files`; `external` is the folder
/// of the weights file an optimised graph names; `prepack` has ONNX Runtime copy the weights
/// into the layout its matrix products read fastest (see [`LIGHT_TEXTS`]). The tokenizer is
/// `tokenizer` when given (a model loaded again keeps its own), else it is made from `files`
/// on a second thread while ONNX Runtime builds the session (see [`tokens`]).
fn session(
    source: &ModelSource,
    onnx: Vec<u8>,
    files: &TokenizerFiles,
    external: Option<&Path>,
    prepack: bool,
    tokenizer: Option<tokenizers::Tokenizer>,
) -> Result<TextEmbedding, EmbedError> {
    // The tokenizer is made while ONNX Runtime starts and builds the session.
    std::thread::scope(|scope| {
        let made = tokenizer.is_none().then(|| scope.spawn(|| tokens::build(files, MAX_TOKENS)));
        let built = fastembed_session(source, onnx, files, external, prepack);
        let tokenizer = match made {
            Some(thread) => {
                thread.join().unwrap_or_else(|panic| Err((TOKENIZER_FILES[0], panic_text(&*panic))))
            }
            None => Ok(tokenizer.expect("given when not made")),
        };
        let mut model = built?;
        model.tokenizer =
            tokenizer.map_err(|(file, message)| model_error(source, "tokenizer", file, message))?;
        Ok(model)
    })
}

/// The session fastembed builds over `onnx` (see [`session`]), with a one-word tokenizer.
fn fastembed_session(
    source: &ModelSource,
    onnx: Vec<u8>,
    files: &TokenizerFiles,
    external: Option<&Path>,
    prepack: bool,
) -> Result<TextEmbedding, EmbedError> {
    let placeholder =
        TokenizerFiles { tokenizer_file: tokens::PLACEHOLDER.as_bytes().to_vec(), ..files.clone() };
    let user_model = UserDefinedEmbeddingModel::new(onnx, placeholder).with_pooling(Pooling::Mean);
    // No spinning: ONNX Runtime's threads otherwise busy-wait after each call, taking a
    // core from the index refresh that follows in a long-running process.
    let mut options = InitOptionsUserDefined::new()
        .with_environment(environment(&source.runtime)?)
        .with_max_length(MAX_TOKENS)
        .with_session_config("session.intra_op.allow_spinning", "0")
        .with_session_config("session.inter_op.allow_spinning", "0");
    if !prepack {
        options = options.with_session_config("session.disable_prepacking", "1");
    }
    if let Some(folder) = external {
        options = options.with_session_config(
            "session.model_external_initializers_file_folder_path",
            folder.to_string_lossy(),
        );
    }
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        TextEmbedding::try_new_from_user_defined(user_model, options)
    }));
    match built {
        Ok(Ok(model)) => Ok(model),
        Ok(Err(fastembed::Error::Ort(e))) => {
            Err(model_error(source, "ONNX model", MODEL_FILE, e.to_string()))
        }
        Ok(Err(e)) => Err(model_error(source, "tokenizer", TOKENIZER_FILES[0], e.to_string())),
        Err(panic) => Err(model_error(source, "ONNX model", MODEL_FILE, panic_text(&*panic))),
    }
}

/// One short text proves the model runs and tells its dimension.
fn probe(source: &ModelSource, model: &mut TextEmbedding) -> Result<usize, EmbedError> {
    let probe = run(model, &["probe"], 1)
        .map_err(|e| model_error(source, "ONNX model", MODEL_FILE, e.to_string()))?;
    match probe.first().map_or(0, Vec::len) {
        0 => Err(model_error(source, "ONNX model", MODEL_FILE, "it returned empty vectors".into())),
        dim => Ok(dim),
    }
}

impl Embedder {
    /// Loads the model described by `source`. Every failure names the file and the fix.
    ///
    /// The graph ONNX Runtime optimises from `model.onnx` is kept in the model folder
    /// (`optimized/`, see [`CACHE_DIR`]) the first time, and later loads read it instead: they
    /// skip the optimisation, map the weights from the file rather than building them in
    /// memory, and need no probe call (the folder records the vector length). A cache that is
    /// missing, stale or damaged is rebuilt; one that cannot be written is done without.
    pub fn load(source: &ModelSource) -> Result<Embedder, EmbedError> {
        Embedder::load_with(source, true)
    }

    /// Loads the model like [`Embedder::load`] but never reads or writes the optimised-model
    /// cache: what `load` does when the model folder cannot be written.
    pub fn load_uncached(source: &ModelSource) -> Result<Embedder, EmbedError> {
        Embedder::load_with(source, false)
    }

    fn load_with(source: &ModelSource, use_cache: bool) -> Result<Embedder, EmbedError> {
        let dir = &source.dir;
        if !dir.is_dir() {
            return Err(EmbedError::Missing { path: dir.clone(), dir: dir.clone() });
        }
        let key = if use_cache { cache::key(source) } else { None };
        if let Some(key) = key.as_deref()
            && let Some(entry) = cache::Entry::read(dir, key)
        {
            let files = read_tokenizer_files(dir)?;
            load_runtime(&source.runtime)?;
            match session(source, entry.graph, &files, Some(&entry.dir), false, None) {
                Ok(model) => {
                    return Ok(Embedder {
                        model,
                        source: source.clone(),
                        checksum: entry.checksum,
                        dim: entry.dim,
                        light: Some((key.to_string(), 0)),
                    });
                }
                // A damaged cache is rebuilt below, from the model itself.
                Err(_) => cache::remove(&entry.dir),
            }
        }

        let onnx = read_model_file(dir, MODEL_FILE)?;
        let files = read_tokenizer_files(dir)?;
        if !source.runtime.is_file() {
            return Err(EmbedError::Missing { path: source.runtime.clone(), dir: dir.clone() });
        }
        load_runtime(&source.runtime)?;
        let checksum = model_checksum(&onnx, &files);
        if let Some(key) = key
            && let Some(embedder) = cache::build(source, &onnx, &files, &key, checksum)
        {
            return Ok(embedder);
        }
        let mut model = session(source, onnx, &files, None, true, None)?;
        let dim = probe(source, &mut model)?;
        Ok(Embedder { model, source: source.clone(), checksum, dim, light: None })
    }

    /// Replaces the light model by the one with prepacked weights, from the same cache
    /// folder; if that is gone or fails, the light model stays (it gives the same vectors).
    fn pack(&mut self) {
        let Some((key, _)) = self.light.take() else { return };
        let Some(entry) = cache::Entry::read(&self.source.dir, &key) else { return };
        if entry.checksum != self.checksum {
            return;
        }
        let Ok(files) = read_tokenizer_files(&self.source.dir) else { return };
        // The tokenizer is the one in use: only the session is built again.
        let tokenizer = self.model.tokenizer.clone();
        let packed =
            session(&self.source, entry.graph, &files, Some(&entry.dir), true, Some(tokenizer));
        if let Ok(model) = packed {
            self.model = model;
        }
    }

    /// Where the model was loaded from.
    pub fn source(&self) -> &ModelSource {
        &self.source
    }

    /// A checksum of the model and tokenizer files and the settings: vectors computed under
    /// another checksum are recomputed.
    pub fn checksum(&self) -> [u8; 32] {
        self.checksum
    }

    /// Length of the vectors.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Unit-length vectors of `texts`, `batch` texts per model call.
    pub fn embed(&mut self, texts: &[&str], batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some((_, done)) = &mut self.light {
            *done += texts.len();
            if *done > LIGHT_TEXTS {
                self.pack();
            }
        }
        let vectors = run(&mut self.model, texts, batch)?;
        if vectors.len() != texts.len() || vectors.iter().any(|v| v.len() != self.dim) {
            return Err(EmbedError::Inference(format!(
                "expected {} vectors of {} values",
                texts.len(),
                self.dim
            )));
        }
        Ok(vectors)
    }

    /// Unit-length vectors of `texts`, in their order, computed shortest text first in model
    /// calls of `batch` texts: a batch is padded to its longest text, so texts of like length
    /// together pad less (the vectors are the same to within 1e-6: padding is masked out, only
    /// the order of float sums differs). `done` hears the number of texts of each call.
    pub fn embed_by_length(
        &mut self,
        texts: &[&str],
        batch: usize,
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| (texts[i].len(), i));
        let mut vectors = vec![Vec::new(); texts.len()];
        for call in order.chunks(batch.max(1)) {
            let some: Vec<&str> = call.iter().map(|&i| texts[i]).collect();
            for (&i, v) in call.iter().zip(self.embed(&some, batch)?) {
                vectors[i] = v;
            }
            done(call.len());
        }
        Ok(vectors)
    }
}

/// Runs the model, turning errors and panics into [`EmbedError::Inference`], and makes every
/// vector unit length (so a dot product is the cosine).
fn run(
    model: &mut TextEmbedding,
    texts: &[&str],
    batch: usize,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        model.embed(texts, Some(batch.max(1)))
    }));
    let mut vectors = match result {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return Err(EmbedError::Inference(e.to_string())),
        Err(panic) => return Err(EmbedError::Inference(panic_text(&*panic))),
    };
    for v in &mut vectors {
        normalize(v);
    }
    Ok(vectors)
}

/// `Σ a[i] × b[i]` over f32 or int8 values `b`, in eight independent sums so that the
/// compiler can vectorise it (a single running sum must be added in order, one value at a
/// time: 50 times slower on 384 values).
pub fn dot<T: Copy>(a: &[f32], b: &[T]) -> f32
where
    f32: From<T>,
{
    let mut acc = [0.0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 =
        ac.remainder().iter().zip(bc.remainder()).map(|(&x, &y)| x * f32::from(y)).sum();
    for (x, y) in ac.zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * f32::from(y[k]);
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// blake3 over the model, the tokenizer files and the settings that shape a vector.
fn model_checksum(onnx: &[u8], files: &TokenizerFiles) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(format!("mem-embed pooling=mean max_tokens={MAX_TOKENS}\n").as_bytes());
    for part in [
        onnx,
        &files.tokenizer_file,
        &files.config_file,
        &files.special_tokens_map_file,
        &files.tokenizer_config_file,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part);
    }
    *h.finalize().as_bytes()
}

/// The text of a memory that gets embedded: its title, tags and body.
pub fn memory_text(title: &str, tags: &[String], body: &str) -> String {
    let mut text = String::with_capacity(title.len() + body.len() + 32);
    let (title, body) = (title.trim(), body.trim());
    if !body.contains(title) {
        text.push_str(title);
        text.push('\n');
    }
    if !tags.is_empty() {
        text.push_str(&tags.join(", "));
        text.push('\n');
    }
    text.push_str(body);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_comes_from_the_front_end_only() {
        assert_eq!(ModelSource::configured(&ModelOverrides::default()), None);
        let folder = ModelOverrides { model_dir: Some("/m".into()), ..Default::default() };
        let s = ModelSource::configured(&folder).unwrap();
        assert_eq!(s.runtime, Path::new("/m/libonnxruntime.so"));
        let overrides = ModelOverrides {
            model_dir: Some("/m".into()),
            runtime: Some("/lib/libonnxruntime.so.1".into()),
            leave_at_exit: false,
        };
        let s = ModelSource::configured(&overrides).unwrap();
        assert_eq!(s.dir, Path::new("/m"));
        assert_eq!(s.runtime, Path::new("/lib/libonnxruntime.so.1"));
    }

    #[test]
    fn missing_folder_names_the_fetch_script() {
        let dir = tempfile::tempdir().unwrap();
        let source = ModelSource {
            dir: dir.path().join("nowhere"),
            runtime: dir.path().join("nowhere/libonnxruntime.so"),
        };
        let e = Embedder::load(&source).unwrap_err().to_string();
        assert!(e.contains("nowhere is missing") && e.contains("scripts/fetch-model.sh"), "{e}");
    }

    #[test]
    fn memory_text_keeps_the_title_once() {
        let t = memory_text("Login fails", &["auth".into()], "# Login fails\n\nToken expired.");
        assert_eq!(t, "auth\n# Login fails\n\nToken expired.");
        let t = memory_text("Deploy", &[], "Run make deploy.");
        assert_eq!(t, "Deploy\nRun make deploy.");
    }

    #[test]
    fn dot_matches_the_plain_sum() {
        let a: Vec<f32> = (0..389).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..389).map(|i| (i as f32 * 0.11).cos()).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-4, "{} vs {plain}", dot(&a, &b));
        assert_eq!(dot::<f32>(&[], &[]), 0.0);
    }

    #[test]
    fn normalize_gives_unit_length() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        let mut zero = vec![0.0; 3];
        normalize(&mut zero);
        assert_eq!(zero, vec![0.0; 3]);
    }
}
