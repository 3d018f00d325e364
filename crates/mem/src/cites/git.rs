//! Asking git about a repository that a clone controls, through the one runner of
//! `crate::git` (its fixed policy: nothing of the clone's configuration runs, no missing object
//! is fetched, outputs are bounded). Only objects and history are read through git; the work
//! tree is read by `mod.rs` itself, so that no clean or smudge filter a clone's
//! `.gitattributes` names ever runs. A failure is a `Problem` (text): it says what could not
//! be checked, it never stops a recall.

use std::collections::HashMap;
use std::path::Path;

use crate::git::Runner;

/// What could not be asked of git, as the user reads it.
pub(super) type Problem = String;

/// The most bytes of blobs one `git cat-file --batch` is asked for: more are asked in turns.
const BATCH_BYTES: u64 = 8 << 20;

/// Above this many pathspecs, a `git log` or `git ls-files` runs without them and its output
/// is filtered here: git matches every entry against every pathspec, so hundreds of them cost
/// more than reading the whole history's changes once (measured in docs/benchmarks.md).
const MAX_PATHSPECS: usize = 64;

/// The pathspecs to give git: all of them, or none when there are too many (the caller then
/// filters what comes back).
fn limited(pathspecs: &[String]) -> &[String] {
    if pathspecs.len() > MAX_PATHSPECS { &[] } else { pathspecs }
}

/// The git commands of one check, run in the work tree's top folder.
pub(super) struct Git {
    runner: Runner,
    /// A partial clone: objects may be missing, and are never fetched.
    partial: bool,
}

/// What a `rev:path` spec names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Blob {
    /// Nothing, or something that is no file.
    None,
    /// A file whose blob this (partial) clone does not have: its id.
    Missing(String),
    /// A file: its blob's id and size.
    Here {
        /// The blob's id.
        id: String,
        /// Its size in bytes.
        size: u64,
    },
}

/// What [`Git::renames`] found.
#[derive(Debug, Default)]
pub(super) struct Renames {
    /// Per commit, the paths it renamed, old to new.
    pub(super) by_commit: HashMap<String, HashMap<String, String>>,
    /// The commits whose inexact renames could not be detected (a partial clone lacks the
    /// blobs) and that added files: a path they deleted may have been renamed.
    pub(super) unsure: std::collections::HashSet<String>,
}

/// A commit that deleted paths, as `git log` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Removal {
    /// Its id, abbreviated for people where shown.
    pub(super) commit: String,
    /// Its committer date, `YYYY-MM-DD`.
    pub(super) date: String,
}

/// One line of `git grep`: the file and the line's text.
#[derive(Clone, Debug)]
pub(super) struct GrepLine {
    pub(super) path: String,
    pub(super) text: String,
}

impl Git {
    /// The git commands of the work tree whose top folder is `top`; `partial` when the
    /// repository is a partial clone.
    pub(super) fn new(top: &Path, partial: bool) -> Git {
        Git { runner: Runner::new(top), partial }
    }

    /// Runs git with `args` and `input` on stdin; stdout, or why not. An exit status of 1 with
    /// nothing on stderr is "nothing found" (`grep`, `rev-parse --verify -q`): empty output.
    fn run(&self, args: &[&str], input: &[u8]) -> Result<Vec<u8>, Problem> {
        let out =
            self.runner.run(args, &[], input, None).map_err(|f| format!("git {}: {f}", args[0]))?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        if out.status.code() == Some(1) && out.stderr.iter().all(u8::is_ascii_whitespace) {
            return Ok(Vec::new());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if self.partial
            && ["promisor", "lazy fetch", "unable to read"].iter().any(|w| stderr.contains(w))
        {
            return Err(format!(
                "git {}: needs objects this partial clone does not have (mem never fetches them)",
                args[0]
            ));
        }
        Err(format!("git {}: {}", args[0], out.first_error()))
    }

    /// The commit HEAD names, `None` in a repository without commits.
    pub(super) fn head(&self) -> Result<Option<String>, Problem> {
        let out = self.run(&["rev-parse", "--verify", "-q", "HEAD^{commit}"], b"")?;
        let head = String::from_utf8_lossy(&out).trim().to_string();
        Ok((!head.is_empty()).then_some(head))
    }

    /// HEAD's first-parent history, newest first, as (commit, committer time in seconds).
    pub(super) fn first_parents(&self) -> Result<Vec<(String, i64)>, Problem> {
        let out = self.run(&["log", "--first-parent", "--format=%H %ct", "HEAD", "--"], b"")?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|l| {
                let (commit, time) = l.split_once(' ')?;
                Some((commit.to_string(), time.parse().ok()?))
            })
            .collect())
    }

    /// For each `rev:path` spec (or `:path`, the index's), what it names: a file's blob with
    /// its size, a file whose blob this partial clone does not have, or nothing. Nothing is
    /// fetched; a spec holding a newline names nothing (git reads one per line).
    pub(super) fn blob_ids(&self, specs: &[String]) -> Result<Vec<Blob>, Problem> {
        let mut found = vec![Blob::None; specs.len()];
        let asked: Vec<usize> = (0..specs.len()).filter(|i| !specs[*i].contains('\n')).collect();
        if asked.is_empty() {
            return Ok(found);
        }
        let input: String = asked.iter().map(|i| format!("{}\n", specs[*i])).collect();
        let format = "--batch-check=%(objectname) %(objecttype) %(objectsize)";
        let out = match self.run(&["cat-file", format], input.as_bytes()) {
            Ok(out) => out,
            // An older git stops the whole batch at an object it may not fetch: one at a time.
            Err(_) if self.partial => return Ok(self.blob_ids_one_by_one(specs)),
            Err(problem) => return Err(problem),
        };
        let lines: Vec<&str> = std::str::from_utf8(&out).unwrap_or("").lines().collect();
        let mut missing = Vec::new();
        for (n, i) in asked.iter().enumerate() {
            let Some(line) = lines.get(n) else { break };
            found[*i] = file_blob(line).unwrap_or_else(|| {
                if self.partial && line.ends_with(" missing") {
                    missing.push(*i);
                }
                Blob::None
            });
        }
        for (i, blob) in self.missing(specs, &missing) {
            found[i] = blob;
        }
        Ok(found)
    }

    /// [`Git::blob_ids`] one spec per git process (a partial clone's, on a git that stops a
    /// batch at a missing object), at most [`MAX_PATHSPECS`] of them.
    fn blob_ids_one_by_one(&self, specs: &[String]) -> Vec<Blob> {
        let format = "--batch-check=%(objectname) %(objecttype) %(objectsize)";
        let mut missing = Vec::new();
        let mut found: Vec<Blob> = specs
            .iter()
            .enumerate()
            .map(|(n, spec)| {
                if n >= MAX_PATHSPECS || spec.contains('\n') {
                    return Blob::None;
                }
                let out = self.run(&["cat-file", format], format!("{spec}\n").as_bytes());
                match out.map(|o| String::from_utf8_lossy(&o).trim().to_string()) {
                    Ok(line) => file_blob(&line).unwrap_or(Blob::None),
                    Err(_) => {
                        missing.push(n);
                        Blob::None
                    }
                }
            })
            .collect();
        for (i, blob) in self.missing(specs, &missing) {
            found[i] = blob;
        }
        found
    }

    /// What the specs `specs[i]` (`rev:path`) whose object git reports missing name, for
    /// each `i` of `which`: the blob's id when the trees (which a blobless clone has) name one,
    /// read with one `git ls-tree` per commit and no blob read; the others name nothing.
    fn missing(&self, specs: &[String], which: &[usize]) -> Vec<(usize, Blob)> {
        let mut by_rev: std::collections::BTreeMap<&str, Vec<(usize, &str)>> = Default::default();
        for i in which {
            if let Some((rev, path)) = specs[*i].split_once(':').filter(|(rev, _)| !rev.is_empty())
            {
                by_rev.entry(rev).or_default().push((*i, path));
            }
        }
        let mut found = Vec::new();
        for (rev, paths) in by_rev {
            let mut args = vec!["--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--"];
            args.extend(paths.iter().map(|(_, p)| *p));
            let Ok(out) = self.run(&args, b"") else { continue };
            let ids: HashMap<String, String> = nul_fields(&out)
                .filter_map(|entry| {
                    let entry = String::from_utf8_lossy(entry);
                    let (meta, path) = entry.split_once('\t')?;
                    let mut meta = meta.split(' ');
                    let (_, kind, id) = (meta.next()?, meta.next()?, meta.next()?);
                    (kind == "blob").then(|| (path.to_string(), id.to_string()))
                })
                .collect();
            for (i, path) in paths {
                if let Some(id) = ids.get(path) {
                    found.push((i, Blob::Missing(id.clone())));
                }
            }
        }
        found
    }

    /// The contents of the blobs `blobs` that are at most `limit` bytes (`None` for the
    /// others, and for those missing): a larger blob is never read, each is read once however
    /// many specs name it, and one `git cat-file --batch` is asked for at most [`BATCH_BYTES`].
    pub(super) fn blobs(
        &self,
        blobs: &[Blob],
        limit: u64,
    ) -> Result<Vec<Option<Vec<u8>>>, Problem> {
        let mut found = vec![None; blobs.len()];
        // Each blob once, however many specs name it.
        let mut first: HashMap<&str, usize> = HashMap::new();
        let wanted: Vec<(usize, &str, u64)> = blobs
            .iter()
            .enumerate()
            .filter_map(|(i, b)| match b {
                Blob::Here { id, size } if *size <= limit && !first.contains_key(id.as_str()) => {
                    first.insert(id, i);
                    Some((i, id.as_str(), *size))
                }
                _ => None,
            })
            .collect();
        let mut batches: Vec<Vec<(usize, &str, u64)>> = Vec::new();
        let mut bytes = 0;
        for item in wanted {
            if batches.is_empty() || bytes + item.2 > BATCH_BYTES {
                batches.push(Vec::new());
                bytes = 0;
            }
            bytes += item.2;
            batches.last_mut().expect("a batch").push(item);
        }
        for batch in batches {
            let input: String = batch.iter().map(|(_, id, _)| format!("{id}\n")).collect();
            let out = self.run(&["cat-file", "--batch"], input.as_bytes())?;
            let mut rest = &out[..];
            for (i, _, _) in batch {
                let Some(end) = rest.iter().position(|b| *b == b'\n') else { break };
                let header = String::from_utf8_lossy(&rest[..end]).to_string();
                rest = &rest[end + 1..];
                let size: Option<usize> = header.split(' ').nth(2).and_then(|s| s.parse().ok());
                let Some(size) = size.filter(|s| *s <= rest.len()) else { continue };
                found[i] = (size as u64 <= limit).then(|| rest[..size].to_vec());
                rest = rest.get(size + 1..).unwrap_or(&[]);
            }
        }
        for (i, blob) in blobs.iter().enumerate() {
            if let Blob::Here { id, .. } = blob
                && let Some(&at) = first.get(id.as_str()).filter(|at| **at != i)
            {
                found[i] = found[at].clone();
            }
        }
        Ok(found)
    }

    /// The tracked paths (the index) that `pathspecs` match, as git's pathspec magic reads
    /// them (`:(literal)a/b.py`, `:(glob)**/b.py`); with more than [`MAX_PATHSPECS`], every
    /// tracked path (the caller filters).
    pub(super) fn tracked(&self, pathspecs: &[String]) -> Result<Vec<String>, Problem> {
        if pathspecs.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec!["ls-files", "-z", "--full-name", "--"];
        args.extend(limited(pathspecs).iter().map(String::as_str));
        let out = self.run(&args, b"")?;
        Ok(nul_fields(&out).map(|f| String::from_utf8_lossy(f).into_owned()).collect())
    }

    /// The commits of HEAD's history that deleted a path `pathspecs` match (a rename counts as
    /// its old path's deletion), newest first: per path, the latest. With more than
    /// [`MAX_PATHSPECS`], every deletion of the history (the caller filters).
    pub(super) fn deletions(
        &self,
        pathspecs: &[String],
    ) -> Result<HashMap<String, Removal>, Problem> {
        self.latest("--diff-filter=D", pathspecs)
    }

    /// The commits of HEAD's history that added a path `pathspecs` match (a rename counts as
    /// its new path's addition), newest first: per path, the latest (see [`Git::deletions`]).
    pub(super) fn additions(
        &self,
        pathspecs: &[String],
    ) -> Result<HashMap<String, Removal>, Problem> {
        self.latest("--diff-filter=A", pathspecs)
    }

    /// Per path that `pathspecs` match, the latest commit of HEAD's history whose change of it
    /// `filter` (`--diff-filter=D`, `--diff-filter=A`) keeps, renames read as a delete and an
    /// add.
    fn latest(
        &self,
        filter: &str,
        pathspecs: &[String],
    ) -> Result<HashMap<String, Removal>, Problem> {
        let mut found = HashMap::new();
        if pathspecs.is_empty() {
            return Ok(found);
        }
        let mut args = vec![
            "log",
            "--format=%x01%H %cs",
            "-z",
            "--name-only",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            filter,
            "HEAD",
            "--",
        ];
        args.extend(limited(pathspecs).iter().map(String::as_str));
        let out = self.run(&args, b"")?;
        for chunk in out.split(|b| *b == 1).filter(|c| !c.is_empty()) {
            let mut fields = nul_fields(chunk);
            let Some(header) = fields.next() else { continue };
            let header = String::from_utf8_lossy(header);
            let Some((commit, date)) = header.trim().split_once(' ') else { continue };
            for path in fields {
                let path = String::from_utf8_lossy(path).trim_start_matches('\n').to_string();
                if path.is_empty() {
                    continue;
                }
                found.entry(path).or_insert_with(|| Removal {
                    commit: commit.to_string(),
                    date: date.to_string(),
                });
            }
        }
        Ok(found)
    }

    /// The paths that each of `commits` renamed, old to new, by git's rename detection against
    /// its first parent: one `git diff-tree --stdin` for all of them. In a partial clone, whose
    /// blobs inexact rename detection would need, a failed detection falls back to exact renames
    /// (`-M100%`, which reads no blob); the commits that added files are then [`Renames::unsure`].
    pub(super) fn renames(&self, commits: &[String]) -> Result<Renames, Problem> {
        let mut found = Renames::default();
        if commits.is_empty() {
            return Ok(found);
        }
        let input: String = commits.iter().map(|c| format!("{c}\n")).collect();
        let args = |detect| {
            let z = ["-z", "--no-ext-diff", "--no-textconv"];
            [&["diff-tree", "--stdin", "-r", detect, "--name-status"][..], &z[..]].concat()
        };
        let (out, exact_only) = match self.run(&args("-M"), input.as_bytes()) {
            Ok(out) => (out, false),
            Err(_) if self.partial => (self.run(&args("-M100%"), input.as_bytes())?, true),
            Err(problem) => return Err(problem),
        };
        let fields: Vec<&[u8]> = nul_fields(&out).collect();
        let is_commit =
            |f: &[u8]| matches!(f.len(), 40 | 64) && f.iter().all(|b| b.is_ascii_hexdigit());
        let mut current: Option<String> = None;
        let mut i = 0;
        while i < fields.len() {
            let field = fields[i];
            if is_commit(field) {
                current = Some(String::from_utf8_lossy(field).into_owned());
                i += 1;
                continue;
            }
            match field.first() {
                Some(b'R' | b'C') => {
                    if let (b'R', Some(commit), Some(old), Some(new)) =
                        (field[0], &current, fields.get(i + 1), fields.get(i + 2))
                    {
                        let old = String::from_utf8_lossy(old).into_owned();
                        let new = String::from_utf8_lossy(new).into_owned();
                        found.by_commit.entry(commit.clone()).or_default().insert(old, new);
                    }
                    i += 3;
                }
                Some(b'A') => {
                    if let Some(commit) = current.as_ref().filter(|_| exact_only) {
                        found.unsure.insert(commit.clone());
                    }
                    i += 2;
                }
                _ => i += 2,
            }
        }
        Ok(found)
    }

    /// The renames staged in the index and not committed yet (`git mv`), old path to new, by
    /// git's rename detection between HEAD and the index: nothing of the work tree is read.
    pub(super) fn staged_renames(&self) -> Result<HashMap<String, String>, Problem> {
        let args = [
            "diff-index",
            "--cached",
            "-M",
            "-r",
            "-z",
            "--name-status",
            "--no-ext-diff",
            "--no-textconv",
            "HEAD",
            "--",
        ];
        let out = self.run(&args, b"")?;
        let fields: Vec<&[u8]> = nul_fields(&out).collect();
        let mut found = HashMap::new();
        let mut i = 0;
        while i < fields.len() {
            match fields[i].first() {
                Some(b'R' | b'C') => {
                    if let (b'R', Some(old), Some(new)) =
                        (fields[i][0], fields.get(i + 1), fields.get(i + 2))
                    {
                        let old = String::from_utf8_lossy(old).into_owned();
                        found.insert(old, String::from_utf8_lossy(new).into_owned());
                    }
                    i += 3;
                }
                _ => i += 2,
            }
        }
        Ok(found)
    }

    /// The lines of the files at `rev` that hold one of `names` as a whole word, the project
    /// root's memories left out: a memory that quotes a definition is not where it is.
    pub(super) fn grep(&self, rev: &str, names: &[&str]) -> Result<Vec<GrepLine>, Problem> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec!["grep", "-z", "-I", "-w", "-F", "--no-textconv", "--no-color"];
        for name in names {
            args.extend(["-e", name]);
        }
        let memories = format!(":(top,exclude){}", super::PROJECT_FOLDER);
        args.extend([rev, "--", ":(top)", &memories]);
        let out = self.run(&args, b"")?;
        let prefix = format!("{rev}:");
        let mut lines = Vec::new();
        for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let mut parts = line.splitn(2, |b| *b == 0);
            let (Some(path), Some(text)) = (parts.next(), parts.next()) else { continue };
            let path = String::from_utf8_lossy(path);
            let path = path.strip_prefix(&prefix).unwrap_or(&path).to_string();
            if path.starts_with(&format!("{}/", super::PROJECT_FOLDER)) {
                continue;
            }
            lines.push(GrepLine { path, text: String::from_utf8_lossy(text).into_owned() });
        }
        Ok(lines)
    }

    /// The commits of HEAD's history that changed one of `paths`, newest first, each with its
    /// committer time, its date (`YYYY-MM-DD`) and the paths of `paths` it changed: one
    /// path-limited `git log` for all of them (with more than [`MAX_PATHSPECS`], the log of
    /// every change, filtered here).
    pub(super) fn touching(&self, paths: &[String]) -> Result<Vec<Touch>, Problem> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec![
            "log",
            "--format=%x01%H %ct %cs",
            "-z",
            "--name-only",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "HEAD",
            "--",
        ];
        let specs: Vec<String> = paths.iter().map(|p| format!(":(literal){p}")).collect();
        args.extend(limited(&specs).iter().map(String::as_str));
        let asked: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
        let out = self.run(&args, b"")?;
        let mut found = Vec::new();
        for chunk in out.split(|b| *b == 1).filter(|c| !c.is_empty()) {
            let mut fields = nul_fields(chunk);
            let Some(header) = fields.next() else { continue };
            let header = String::from_utf8_lossy(header);
            let mut parts = header.trim().split(' ');
            let (Some(commit), Some(time), Some(date)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let paths: Vec<String> = fields
                .map(|p| String::from_utf8_lossy(p).trim_start_matches('\n').to_string())
                .filter(|p| asked.contains(p.as_str()))
                .collect();
            if paths.is_empty() {
                continue;
            }
            found.push(Touch {
                commit: commit.to_string(),
                time: time.parse().unwrap_or(0),
                date: date.to_string(),
                paths,
            });
        }
        Ok(found)
    }
}

/// A commit that changed some of the paths asked about.
#[derive(Clone, Debug)]
pub(super) struct Touch {
    /// Its id.
    pub(super) commit: String,
    /// Its committer time, in seconds.
    pub(super) time: i64,
    /// Its committer date, `YYYY-MM-DD`.
    pub(super) date: String,
    /// The paths asked about that it changed.
    pub(super) paths: Vec<String>,
}

/// The blob a `git cat-file --batch-check=%(objectname) %(objecttype) %(objectsize)` line
/// names, when it names a file's.
fn file_blob(line: &str) -> Option<Blob> {
    match line.split(' ').collect::<Vec<_>>()[..] {
        [id, "blob", size] => {
            Some(Blob::Here { id: id.to_string(), size: size.parse().unwrap_or(u64::MAX) })
        }
        _ => None,
    }
}

/// The non-empty NUL-separated fields of git's `-z` output.
fn nul_fields(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| *b == 0).filter(|f| !f.is_empty() && *f != b"\n")
}
