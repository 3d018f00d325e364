//! Local embeddings with the real model (fetched by `scripts/fetch-model.sh`, see
//! `util::model_dir`): hybrid and vector recall, incremental vectors, a broken model falling
//! back to BM25, admission and reflection by embedding, and the MCP server.

use std::path::Path;
use std::process::Command;

use crate::util::{Dir, NOW, bin, ids, memory, model_dir, run};

const KITTEN: &str = "01KA0000000000000000000001";

/// A root with one memory about a kitten and three on other subjects.
fn pets_and_ops() -> Dir {
    let dir = Dir::new();
    dir.write(
        "kitten.md",
        memory(KITTEN, "episodic", 5, "2026-11-01T09:00:00Z", "The kitten rests on a rug.\n"),
    );
    dir.write(
        "deploy.md",
        memory(
            "01KA0000000000000000000002",
            "procedural",
            5,
            "2026-11-01T09:00:00Z",
            "Deploy the API with `make deploy` from the release branch.\n",
        ),
    );
    dir.write(
        "backup.md",
        memory(
            "01KA0000000000000000000003",
            "semantic",
            5,
            "2026-11-01T09:00:00Z",
            "Postgres backups run nightly at 02:00 UTC and are kept for 30 days.\n",
        ),
    );
    dir.write(
        "pnpm.md",
        memory(
            "01KA0000000000000000000004",
            "semantic",
            5,
            "2026-11-01T09:00:00Z",
            "We use pnpm, never npm.\n",
        ),
    );
    dir
}

/// A copy of the model folder, to be damaged by a test.
fn model_copy(dir: &Dir) -> std::path::PathBuf {
    let copy = dir.path().join("model-copy");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(model_dir()).unwrap() {
        let entry = entry.unwrap();
        // The files only: not the optimised model kept beside them (`optimized/`).
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    copy
}

/// `mem --dir DIR ARGS` with `MEM_EMBED_MODEL_DIR` set to `model`.
fn mem_with_model(dir: &Dir, model: &Path, args: &[&str]) -> crate::util::Out {
    run(Command::new(bin())
        .arg("--dir")
        .arg(dir.path())
        .args(args)
        .env("MEM_EMBED_MODEL_DIR", model))
}

#[test]
fn hybrid_recall_finds_a_paraphrase_that_bm25_misses() {
    let dir = pets_and_ops();
    dir.use_model("");
    let query = "cat sat on the mat";
    let bm25 = dir.mem(&["recall", "--json", "--no-record", "--mode", "bm25", query]);
    assert!(
        !ids(&bm25.json_found()).contains(&KITTEN.to_string()),
        "no word in common: {}",
        bm25.stdout
    );

    let hybrid = dir.mem(&["recall", "--json", "--no-record", query]);
    let hits = hybrid.json();
    assert_eq!(ids(&hits).first().map(String::as_str), Some(KITTEN), "{}", hybrid.stdout);
    let first = &hits[0];
    assert!(first["cosine"].as_f64().unwrap() > 0.5, "{first}");
    assert_eq!(first["vector_rank"], 1);
    assert!(first["bm25_rank"].is_null(), "{first}");
    // Unrelated memories stay out: their cosine is below [embed] min_cosine.
    assert_eq!(hits.as_array().unwrap().len(), 1, "{}", hybrid.stdout);

    let vector = dir.mem(&["recall", "--json", "--no-record", "--mode", "vector", query]);
    assert_eq!(ids(&vector.json()), [KITTEN]);

    let explain = dir.mem(&["recall", "--explain", "--no-record", query]);
    let out = explain.ok();
    for column in ["relevance", "bm25", "cosine", "fused", "recency", "importance"] {
        assert!(out.contains(column), "{column} missing:\n{out}");
    }
    assert!(out.contains("cosine / max cosine"), "{out}");
}

#[test]
fn hybrid_keeps_keyword_matches_and_reports_both_scores() {
    let dir = pets_and_ops();
    dir.use_model("fusion = \"rrf\"");
    let out = dir.mem(&["recall", "--json", "--no-record", "pnpm npm"]);
    let hits = out.json();
    let first = &hits[0];
    assert_eq!(first["id"], "01KA0000000000000000000004", "{}", out.stdout);
    assert_eq!(first["bm25_rank"], 1);
    assert!(first["bm25"].as_f64().unwrap() > 0.0);
    assert!(first["cosine"].as_f64().unwrap() > 0.3, "{first}");
    // RRF: 1/(60 + 1) from each list, normalised to relevance 1.
    let fused = first["fused"].as_f64().unwrap();
    assert!((fused - 2.0 / 61.0).abs() < 1e-9, "{fused}");
    assert_eq!(first["components"]["relevance"], 1.0);
}

#[test]
fn vectors_are_computed_once_and_follow_the_text() {
    let dir = pets_and_ops();
    dir.use_model("");
    let vectors = |out: crate::util::Out| out.json()["vectors"].clone();
    let first = vectors(dir.mem(&["index", "--json"]));
    assert_eq!((first["embedded"].as_u64(), first["removed"].as_u64()), (Some(4), Some(0)));
    assert!(dir.path().join(".mem/vectors.bin").is_file());

    let again = vectors(dir.mem(&["index", "--json"]));
    assert_eq!((again["embedded"].as_u64(), again["reused"].as_u64()), (Some(0), Some(0)));

    // A new importance changes the file, not the text that is embedded.
    let kitten = dir.read("kitten.md").replace("importance: 5", "importance: 6");
    dir.write("kitten.md", kitten);
    let touched = vectors(dir.mem(&["index", "--json"]));
    assert_eq!((touched["embedded"].as_u64(), touched["reused"].as_u64()), (Some(0), Some(1)));

    // A new body is embedded again; a deleted memory's vector goes.
    let kitten = dir.read("kitten.md").replace("rests on a rug", "sleeps in the sun");
    dir.write("kitten.md", kitten);
    std::fs::remove_file(dir.path().join("backup.md")).unwrap();
    let changed = vectors(dir.mem(&["index", "--json"]));
    assert_eq!((changed["embedded"].as_u64(), changed["removed"].as_u64()), (Some(1), Some(1)));

    // Vectors are derived state: a damaged file is recomputed, with a notice.
    let file = dir.path().join(".mem/vectors.bin");
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let out = dir.mem(&["index", "--json"]);
    assert!(out.stderr.contains("vector file was unreadable"), "{}", out.stderr);
    assert_eq!(out.json()["vectors"]["embedded"], 3);
}

#[test]
fn recall_embeds_new_memories_itself_up_to_its_limit() {
    let dir = pets_and_ops();
    dir.use_model("recall_embed_limit = 2");
    // Four memories without vectors: more than the limit, so recall searches what it has
    // (nothing) and says how to compute the rest; BM25 still answers.
    let out = dir.mem(&["recall", "--json", "--no-record", "make deploy"]);
    assert!(out.stderr.contains("4 memories have no vector yet"), "{}", out.stderr);
    assert!(out.stderr.contains("mem index"), "{}", out.stderr);
    assert_eq!(ids(&out.json()), ["01KA0000000000000000000002"]);
    dir.mem(&["index"]).ok();
    dir.write(
        "new.md",
        memory("01KA0000000000000000000005", "semantic", 5, NOW, "A puppy naps on the sofa.\n"),
    );
    // One new memory: within the limit, embedded by the recall.
    let out = dir.mem(&["recall", "--json", "--no-record", "--mode", "vector", "dog sleeping"]);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    assert_eq!(ids(&out.json()).first().map(String::as_str), Some("01KA0000000000000000000005"));
}

#[test]
fn a_broken_model_falls_back_to_bm25_with_one_warning() {
    let dir = pets_and_ops();
    let model = model_copy(&dir);
    let onnx = model.join("model.onnx");
    let bytes = std::fs::read(&onnx).unwrap();
    std::fs::write(&onnx, &bytes[..4096]).unwrap();

    let out = mem_with_model(&dir, &model, &["recall", "--json", "--no-record", "make deploy"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(ids(&out.json()), ["01KA0000000000000000000002"], "BM25 still answers");
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    let warning = warnings[0];
    assert!(warning.contains(onnx.to_str().unwrap()), "names the file: {warning}");
    assert!(warning.contains("scripts/fetch-model.sh"), "names the fix: {warning}");
    assert!(warning.contains("BM25 only"), "{warning}");
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);

    // `mem health` reports it and exits 1; an explicit vector recall is an error.
    let health = mem_with_model(&dir, &model, &["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(health.stdout.contains("✗ embedding"), "{}", health.stdout);
    assert!(health.stdout.contains("model.onnx"), "{}", health.stdout);
    let vector = mem_with_model(&dir, &model, &["recall", "--mode", "vector", "make deploy"]);
    assert_eq!(vector.code, 2, "{}", vector.stderr);
    assert!(vector.stderr.contains("model.onnx"), "{}", vector.stderr);

    // `mem index` still indexes, and says the vectors were not computed.
    let index = mem_with_model(&dir, &model, &["index"]);
    assert_eq!(index.code, 0, "{}", index.stderr);
    assert!(index.stderr.contains("no vectors computed"), "{}", index.stderr);
}

#[test]
fn a_missing_file_or_runtime_is_named_with_the_fix() {
    let dir = pets_and_ops();
    let model = model_copy(&dir);
    std::fs::remove_file(model.join("tokenizer.json")).unwrap();
    let out = mem_with_model(&dir, &model, &["recall", "--no-record", "make deploy"]);
    assert_eq!(out.code, 0);
    let tokenizer = model.join("tokenizer.json");
    assert!(out.stderr.contains(&format!("{} is missing", tokenizer.display())), "{}", out.stderr);

    std::fs::copy(model_dir().join("tokenizer.json"), &tokenizer).unwrap();
    std::fs::write(model.join("libonnxruntime.so"), "not a library").unwrap();
    let out = mem_with_model(&dir, &model, &["recall", "--no-record", "make deploy"]);
    assert_eq!(out.code, 0);
    assert!(out.stderr.contains("ONNX Runtime"), "{}", out.stderr);
    assert!(out.stderr.contains("1.24 or later"), "{}", out.stderr);

    let nowhere = dir.path().join("no-such-folder");
    let out = mem_with_model(&dir, &nowhere, &["health"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("no-such-folder is missing"), "{}", out.stdout);

    // Without any model configured, nothing is said about embeddings.
    let plain = dir.mem(&["recall", "--no-record", "make deploy"]);
    assert!(plain.stderr.is_empty(), "{}", plain.stderr);
    // Asking for vectors without a model is an error that says how to get one.
    let asked = dir.mem(&["recall", "--mode", "hybrid", "make deploy"]);
    assert_eq!(asked.code, 2);
    assert!(asked.stderr.contains("no embedding model is configured"), "{}", asked.stderr);
    assert!(asked.stderr.contains("scripts/fetch-model.sh"), "{}", asked.stderr);
}

#[test]
fn the_environment_variable_configures_the_model() {
    let dir = pets_and_ops();
    let out =
        mem_with_model(&dir, model_dir(), &["recall", "--json", "--no-record", "cat on a mat"]);
    assert_eq!(ids(&out.json()).first().map(String::as_str), Some(KITTEN), "{}", out.stderr);
    let health = mem_with_model(&dir, model_dir(), &["health"]);
    assert!(health.stdout.contains("✓ embedding model in"), "{}", health.stdout);
    assert!(health.stdout.contains("(384-d)"), "{}", health.stdout);
}

#[test]
fn admission_refuses_a_paraphrased_duplicate() {
    let dir = pets_and_ops();
    dir.use_model("");
    let out = dir.mem(&["add", "We always use pnpm and never npm"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("embedding similarity"), "{}", out.stderr);
    assert!(out.stderr.contains("01KA0000000000000000000004"), "{}", out.stderr);
    dir.mem(&["add", "Cats like warm places near the heater"]).ok();

    // Memories without a vector yet (more than the recall limit) are still checked, by TF-IDF.
    let fresh = pets_and_ops();
    fresh.use_model("recall_embed_limit = 0");
    let out = fresh.mem(&["add", "We use pnpm and never npm."]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("tf-idf similarity"), "{}", out.stderr);
}

#[test]
fn reflection_groups_observations_that_share_no_words() {
    let dir = Dir::new();
    let observations = [
        "Users got logged out unexpectedly after lunch.",
        "People were signed off from their accounts without warning.",
        "Users were kicked out of their sessions at random.",
        "The quarterly tax filing deadline is the fifteenth.",
        "Bought a new espresso machine for the office kitchen.",
    ];
    for (i, text) in observations.iter().enumerate() {
        let id = format!("01KB00000000000000000000{i:02}");
        dir.write(&format!("o{i}.md"), memory(&id, "episodic", 5, "2026-11-01T09:00:00Z", text));
    }
    let tfidf = dir.mem(&["reflect", "--dry-run", "--json"]);
    assert_eq!(tfidf.json(), serde_json::json!([]), "TF-IDF finds no cluster");

    dir.use_model("");
    let out = dir.mem(&["reflect", "--dry-run", "--json"]);
    let proposals = out.json();
    assert_eq!(proposals.as_array().unwrap().len(), 1, "{}", out.stdout);
    let sources: Vec<&str> = proposals[0]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        ["01KB0000000000000000000000", "01KB0000000000000000000001", "01KB0000000000000000000002"]
    );
    let text = dir.mem(&["reflect", "--dry-run"]);
    assert!(text.ok().starts_with("grouped by embedding cosine >= 0.5"), "{}", text.stdout);
}

/// ONNX Runtime 1.23.2's library, one minor version older than the ONNX Runtime mem's `ort`
/// needs (1.24): fetched once with `pip download` into cargo's target tmp folder, checked by
/// its sha256.
fn old_runtime() -> std::path::PathBuf {
    const SHA256: &str = "718c3fb0785d5ea06061b92c32ce4ad35be1bd4c71ae6192efe06f1ab21f0f8a";
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("onnxruntime-1.23.2");
    let lib = dir.join("libonnxruntime.so");
    let script = r#"
import glob, hashlib, os, subprocess, sys, zipfile
dir, lib, sha = sys.argv[1:]
def ok():
    return os.path.exists(lib) and hashlib.sha256(open(lib, "rb").read()).hexdigest() == sha
if not ok():
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
        "--disable-pip-version-check", "onnxruntime==1.23.2", "--platform",
        "manylinux_2_28_x86_64", "--python-version", "3.11", "--implementation", "cp",
        "--only-binary=:all:", "--dest", dir], check=True)
    wheel = glob.glob(os.path.join(dir, "onnxruntime-1.23.2-*.whl"))[0]
    with zipfile.ZipFile(wheel) as z:
        open(lib, "wb").write(z.read("onnxruntime/capi/libonnxruntime.so.1.23.2"))
    sys.exit(0 if ok() else "checksum mismatch")
"#;
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&dir)
        .arg(&lib)
        .arg(SHA256)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    lib
}

#[test]
fn a_too_old_onnx_runtime_is_refused_with_the_versions() {
    let dir = pets_and_ops();
    let out = run(Command::new(bin())
        .arg("--dir")
        .arg(dir.path())
        .args(["recall", "--json", "--no-record", "make deploy"])
        .env("MEM_EMBED_MODEL_DIR", model_dir())
        .env("ORT_DYLIB_PATH", old_runtime()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(ids(&out.json()), ["01KA0000000000000000000002"], "BM25 still answers");
    assert!(out.stderr.contains("onnxruntime-1.23.2/libonnxruntime.so"), "{}", out.stderr);
    assert!(out.stderr.contains("got '1.23.2'"), "{}", out.stderr);
    assert!(out.stderr.contains("1.24 or later"), "{}", out.stderr);
}

#[test]
fn an_id_used_twice_gets_the_vector_of_its_first_file_by_path() {
    let dir = Dir::new();
    dir.use_model("");
    let id = "01KA0000000000000000000009";
    dir.write(
        "z.md",
        memory(id, "episodic", 5, "2026-11-01T09:00:00Z", "The kitten rests on a rug.\n"),
    );
    dir.write(
        "a.md",
        memory(id, "episodic", 5, "2026-11-01T09:00:00Z", "Deploy the API with make deploy.\n"),
    );
    let out = dir.mem(&["index", "--json"]);
    assert_eq!(out.json()["vectors"]["embedded"], 1, "one vector per id");
    assert!(out.stderr.contains("is used by 2 files"), "{}", out.stderr);
    let hits = dir.mem(&["recall", "--json", "--no-record", "--mode", "vector", "deploy the API"]);
    let hits = hits.json();
    assert!(hits[0]["cosine"].as_f64().unwrap() > 0.8, "the vector is a.md's: {hits}");
}

/// The graph ONNX Runtime optimises is kept in the model folder: a second load reads it instead
/// of optimising again, a damaged one is rebuilt (never an error), and every way gives the
/// vectors and the checksum of the model loaded as it is, uncached.
#[test]
fn the_optimised_model_is_cached_beside_the_model_and_changes_no_vector() {
    use mem::embed::{CACHE_DIR, Embedder, ModelSource, ORT_LIB_FILE};
    use std::os::unix::fs::MetadataExt;

    let dir = Dir::new();
    let model = model_copy(&dir);
    // The runtime of the model folder itself: a process loads one (see the test below).
    let source = ModelSource { runtime: model_dir().join(ORT_LIB_FILE), dir: model.clone() };
    let texts = ["the cat sat on the mat", "a kitten rests on a rug", "quarterly tax filing"];
    let mut plain = Embedder::load_uncached(&source).unwrap();
    assert!(!model.join(CACHE_DIR).exists(), "an uncached load writes nothing");
    let expected = plain.embed(&texts, 3).unwrap();
    let check = |embedder: &mut Embedder, when: &str| {
        assert_eq!(embedder.checksum(), plain.checksum(), "{when}");
        assert_eq!(embedder.dim(), plain.dim(), "{when}");
        let got = embedder.embed(&texts, 3).unwrap();
        for (a, b) in got.iter().zip(&expected) {
            let cosine: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            assert!(cosine > 1.0 - 1e-6, "{when}: cosine {cosine}");
        }
    };
    let folder = || {
        let entries: Vec<_> =
            std::fs::read_dir(model.join(CACHE_DIR)).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(entries.len(), 1, "one complete folder, nothing half built: {entries:?}");
        entries[0].clone()
    };

    check(&mut Embedder::load(&source).unwrap(), "the load that builds the cache");
    let cached = folder();
    for file in ["graph.onnx", "weights.bin", "manifest"] {
        assert!(cached.join(file).is_file(), "{file}");
    }
    let inode = |f: &str| std::fs::metadata(cached.join(f)).unwrap().ino();
    let before = inode("manifest");
    let mut reader = Embedder::load(&source).unwrap();
    check(&mut reader, "the load that reads the cache (weights not prepacked)");
    check(&mut reader, "after more texts (weights prepacked)");
    assert_eq!(inode("manifest"), before, "read, not rebuilt");

    let damages = ["weights cut short", "graph overwritten", "manifest garbage", "folder emptied"];
    for what in damages {
        match what {
            "weights cut short" => std::fs::write(cached.join("weights.bin"), b"short").unwrap(),
            "graph overwritten" => std::fs::write(cached.join("graph.onnx"), [0u8; 64]).unwrap(),
            "manifest garbage" => std::fs::write(cached.join("manifest"), "garbage").unwrap(),
            _ => {
                std::fs::remove_dir_all(&cached).unwrap();
                std::fs::create_dir(&cached).unwrap();
            }
        }
        check(&mut Embedder::load(&source).unwrap(), what);
        assert_eq!(folder(), cached, "{what}: rebuilt under the same key");
        check(&mut Embedder::load(&source).unwrap(), &format!("{what}, then read again"));
    }

    // A model file that changes gets a cache of its own; the old one is removed.
    let tokenizer_config = model.join("tokenizer_config.json");
    let text = std::fs::read_to_string(&tokenizer_config).unwrap();
    std::fs::write(&tokenizer_config, format!("{text}\n")).unwrap();
    let changed = Embedder::load(&source).unwrap();
    assert_ne!(changed.checksum(), plain.checksum(), "the checksum covers the tokenizer files");
    assert_ne!(folder(), cached);
}

/// The cosine is of the question without the people it names: a person's name weighs heavily
/// in a short text's embedding and pulled the memories that say the name above the ones about
/// the question's subject (the name factor and BM25 weigh who). The cosines of "What does
/// Melanie's necklace mean?" are those of "What does necklace mean?", and `--explain` says so;
/// a tag that is the question's topic ("upgrade Playwright") stays.
#[test]
fn the_cosine_leaves_out_the_people_the_question_names() {
    let dir = Dir::new();
    let by = |name: &str, id: &str, text: &str| {
        let body = memory(id, "episodic", 5, "2026-11-01T09:00:00Z", text);
        body.replacen("---\n", &format!("---\ntags: [{name}]\n"), 1)
    };
    let necklace = "01KA0000000000000000000011";
    let melanie = "01KA0000000000000000000012";
    dir.write(
        "a.md",
        by("caroline", necklace, "Caroline: this necklace stands for love and for my roots.\n"),
    );
    dir.write("b.md", by("melanie", melanie, "Melanie: Melanie here, Melanie says hi to all.\n"));
    dir.use_model("");
    let cosine = |query: &str, id: &str| -> Option<f64> {
        let out = dir.mem(&["recall", "--json", "--no-record", "--mode", "hybrid", query]);
        let hits = out.json();
        let hit = hits.as_array().unwrap().iter().find(|h| h["id"] == id).cloned();
        hit.and_then(|h| h["cosine"].as_f64())
    };
    let question = "What does Melanie's necklace mean?";
    let subject = cosine(question, necklace).expect("the necklace is found");
    assert_eq!(Some(subject), cosine("What does necklace mean?", necklace), "the same text");
    let name = cosine(question, melanie).expect("Melanie's memory matches her name");
    assert!(subject > name, "the subject, not the name: {subject} against {name}");
    let explained = dir.mem(&[
        "recall",
        "--explain",
        "--no-record",
        "--mode",
        "hybrid",
        "What does Melanie's necklace mean?",
    ]);
    assert!(
        explained.stdout.contains("without the people it names: \"What does necklace mean?\""),
        "{}",
        explained.stdout
    );
    // A tag that is the question's topic, not its subject, stays in the text embedded.
    dir.write(
        "c.md",
        by("playwright", "01KA0000000000000000000013", "Upgraded Playwright to 1.52.\n"),
    );
    let topic = [
        "recall",
        "--explain",
        "--no-record",
        "--mode",
        "hybrid",
        "when did we upgrade Playwright",
    ];
    let explained = dir.mem(&topic);
    assert!(explained.stdout.contains("Upgraded Playwright"), "{}", explained.stdout);
    assert!(!explained.stdout.contains("without the people"), "{}", explained.stdout);
}

/// `mem index` embeds texts shortest first (`Embedder::embed_by_length`, less padding); the
/// vectors are those of the old order and batching (texts in id order, `batch` at a time), to
/// within 1e-6 of cosine, for texts from a few words to past the model's 256 tokens.
#[test]
fn embedding_shortest_first_changes_no_vector() {
    use mem::embed::{Embedder, ModelSource, ORT_LIB_FILE};

    let words = ["deploy", "the", "login", "token", "expired", "cache", "staging", "postgres"];
    let texts: Vec<String> = [3, 40, 7, 300, 1, 120, 18, 64, 250, 5, 90, 33, 2, 180]
        .iter()
        .enumerate()
        .map(|(k, &n)| (0..n).map(|i| words[(i * 3 + k) % words.len()]).collect::<Vec<_>>())
        .map(|w| w.join(" "))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let source =
        ModelSource { dir: model_dir().to_path_buf(), runtime: model_dir().join(ORT_LIB_FILE) };
    let mut embedder = Embedder::load(&source).unwrap();
    for batch in [1, 4, 32] {
        let mut old = Vec::new();
        for chunk in texts.chunks(batch) {
            old.extend(embedder.embed(chunk, batch).unwrap());
        }
        let mut calls = Vec::new();
        let new = embedder.embed_by_length(&texts, batch, &mut |n| calls.push(n)).unwrap();
        assert_eq!(calls.iter().sum::<usize>(), texts.len());
        assert!(calls.iter().all(|&n| n <= batch), "{calls:?}");
        assert_eq!(new.len(), texts.len());
        for ((a, b), text) in old.iter().zip(&new).zip(&texts) {
            let cosine: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            assert!(cosine >= 1.0 - 1e-6, "batch {batch}, {} chars: cosine {cosine}", text.len());
        }
    }
}

/// The tokenizer `mem` makes beside the session (see crates/mem/src/embed/tokens.rs) is the one fastembed
/// would make itself: the same vectors, bit for bit, as a model built by fastembed alone, for
/// texts one at a time and in padded batches, past the 256 tokens kept, with accents and with
/// special tokens written in the text.
#[test]
fn the_tokenizer_made_beside_the_session_is_fastembeds_own() {
    use fastembed::{
        InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
    };
    use mem::embed::{
        Embedder, MAX_TOKENS, MODEL_FILE, ModelSource, ORT_LIB_FILE, TOKENIZER_FILES,
    };

    let dir = Dir::new();
    let model = model_copy(&dir);
    let source = ModelSource { runtime: model_dir().join(ORT_LIB_FILE), dir: model.clone() };
    let mut ours = Embedder::load_uncached(&source).unwrap();
    let read = |name: &str| std::fs::read(model.join(name)).unwrap();
    let [tokenizer, config, special, tokenizer_config] = TOKENIZER_FILES.map(read);
    let files = TokenizerFiles {
        tokenizer_file: tokenizer,
        config_file: config,
        special_tokens_map_file: special,
        tokenizer_config_file: tokenizer_config,
    };
    let user = UserDefinedEmbeddingModel::new(read(MODEL_FILE), files).with_pooling(Pooling::Mean);
    // The runtime `ours` loaded; ONNX Runtime has one environment per process, shared.
    let environment = mem::embed::shared_environment(&source).unwrap();
    let options =
        InitOptionsUserDefined::new().with_environment(environment).with_max_length(MAX_TOKENS);
    let mut theirs = TextEmbedding::try_new_from_user_defined(user, options).unwrap();

    let long = "the release branch deploys nightly ".repeat(80);
    let texts = [
        "why does the login test fail on staging",
        "Café crème, naïve Ærøskøbing — ÜBER straße",
        "[CLS] a text that writes [SEP] and [MASK] and [PAD] itself",
        long.as_str(),
        "x",
    ];
    for batch in [1, 5] {
        let got = ours.embed(&texts, batch).unwrap();
        let mut want = theirs.embed(texts, Some(batch)).unwrap();
        for v in &mut want {
            mem::embed::normalize(v);
        }
        assert_eq!(got, want, "batch {batch}");
    }
}

/// Issue #53, item 9: a model configured on a root whose memories have no vectors yet made
/// `mem ui`'s search rank with BM25 alone without a word. The page says so, with why.
#[test]
fn the_search_page_says_when_it_ranked_with_bm25_alone() {
    let dir = pets_and_ops();
    dir.use_model("recall_embed_limit = 2");
    let server = crate::ui::Server::launch(&dir, None, |cmd| {
        cmd.env("XDG_CONFIG_HOME", dir.home());
    });
    let page = server.get("/?q=make+deploy").body;
    assert!(page.contains("Ranked with BM25 alone"), "{page}");
    assert!(page.contains("no memory has a vector yet"), "{page}");
    dir.mem(&["index"]).ok();
    let page = server.get("/?q=make+deploy").body;
    assert!(!page.contains("Ranked with BM25 alone"), "{page}");
}
