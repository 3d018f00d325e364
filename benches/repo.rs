//! A deterministic generator of a git repository with a history and a project root of memories
//! that cite its code, shared by `benches/verify.rs` and `examples/gen_repo.rs`: `files` Python
//! files of five functions each, one commit adding them, then `commits − 1` commits that each
//! edit a file, rename one, delete one, remove a function or move a function to another file;
//! memories written between the commits, most citing a file as it was then and one of its
//! functions, some citing nothing. Written with one `git fast-import`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The time of the first commit: 2025-01-01T00:00:00Z, one commit an hour after it.
const START: i64 = 1_735_689_600;

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A file as the history knows it: its functions and how many times it was edited.
#[derive(Clone, Default)]
struct File {
    functions: Vec<String>,
    edits: usize,
}

impl File {
    fn text(&self) -> String {
        let mut text = String::new();
        for f in &self.functions {
            text.push_str(&format!("def {f}(x):\n    return helper(x)\n\n"));
        }
        for e in 0..self.edits {
            text.push_str(&format!("# edit {e}\n"));
        }
        text
    }
}

/// What a generated repository holds: the paths of the first commit, in order.
pub struct Generated {
    /// The files of the first commit.
    pub first: Vec<String>,
    /// How many memories were written.
    pub memories: usize,
}

/// Writes, in `top` (an empty folder), a git repository of `files` files and `commits`
/// commits, and `top/.memory/` with `memories` memories, deterministically from `seed`.
pub fn write(top: &Path, files: usize, commits: usize, memories: usize, seed: u64) -> Generated {
    let mut rng = Rng(seed);
    let mut tree: BTreeMap<String, File> = BTreeMap::new();
    let mut first = Vec::with_capacity(files);
    for i in 0..files {
        let path = format!("src/pkg{}/mod{i}.py", i % 50);
        let functions = (0..5).map(|k| format!("f{i}_{k}")).collect();
        tree.insert(path.clone(), File { functions, edits: 0 });
        first.push(path);
    }
    let mut stream: Vec<u8> = Vec::new();
    let commit = |stream: &mut Vec<u8>, n: usize, ops: &str| {
        let time = START + n as i64 * 3600;
        let message = format!("change {n}");
        let _ = write!(
            stream,
            "commit refs/heads/main\nmark :{}\ncommitter Gen <gen@example.invalid> {time} +0000\n\
             data {}\n{message}\n{}{ops}\n",
            n + 1,
            message.len(),
            if n > 0 { format!("from :{n}\n") } else { String::new() },
        );
    };
    let modify = |path: &str, file: &File| {
        let text = file.text();
        format!("M 100644 inline {path}\ndata {}\n{text}\n", text.len())
    };
    let ops: String = tree.iter().map(|(p, f)| modify(p, f)).collect();
    commit(&mut stream, 0, &ops);
    for n in 1..commits {
        let live: Vec<String> = tree.keys().cloned().collect();
        let pick = live[rng.below(live.len())].clone();
        let ops = match n % 10 {
            6 => {
                let file = tree.remove(&pick).unwrap();
                let to = format!("src/pkg{}/renamed{n}.py", n % 50);
                tree.insert(to.clone(), file);
                format!("R {pick} {to}\n")
            }
            7 => {
                tree.remove(&pick);
                format!("D {pick}\n")
            }
            8 => {
                let file = tree.get_mut(&pick).unwrap();
                if file.functions.len() > 1 {
                    file.functions.remove(0);
                }
                modify(&pick, file)
            }
            9 => {
                let other = live[rng.below(live.len())].clone();
                let moved = tree.get_mut(&pick).unwrap().functions.pop();
                match (moved, other != pick) {
                    (Some(f), true) => {
                        tree.get_mut(&other).unwrap().functions.push(f);
                        modify(&pick, &tree[&pick]) + &modify(&other, &tree[&other])
                    }
                    _ => modify(&pick, &tree[&pick]),
                }
            }
            _ => {
                let file = tree.get_mut(&pick).unwrap();
                file.edits += 1;
                modify(&pick, file)
            }
        };
        commit(&mut stream, n, &ops);
    }
    git(top, &["init", "-q"], b"");
    git(top, &["fast-import", "--quiet"], &stream);
    git(top, &["checkout", "-q", "-f", "main"], b"");
    write_memories(top, &first, commits, memories, &mut rng);
    Generated { first, memories }
}

/// The project root: `memories` memories written between the commits, each about a file as it
/// was then (most still there, some edited, renamed or deleted since) and one of its functions;
/// one in ten cites nothing.
fn write_memories(top: &Path, first: &[String], commits: usize, memories: usize, rng: &mut Rng) {
    let root = top.join(".memory");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("mem.toml"), "").unwrap();
    std::fs::write(root.join(".gitignore"), ".mem/\n").unwrap();
    for j in 0..memories {
        let i = rng.below(first.len());
        let path = &first[i];
        let k = rng.below(5);
        let hour = rng.below(commits.max(1)) as i64;
        let created = jiff::Timestamp::from_second(START + hour * 3600 + 1800).unwrap();
        let body = if j % 10 == 9 {
            format!("Team note {j}: we agreed to keep the review queue short this week.")
        } else {
            format!(
                "The value of step {j} is computed in {path}: call `f{i}_{k}()` with the \
                 request, it wraps helper."
            )
        };
        let kind = if j % 3 == 0 { "procedural" } else { "semantic" };
        let text = format!(
            "---\nid: m{j:05}\ntype: {kind}\nimportance: 5\ncreated: {created}\n---\n{body}\n"
        );
        std::fs::write(root.join(format!("m{j:05}.md")), text).unwrap();
    }
}

fn git(top: &Path, args: &[&str], input: &[u8]) {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("git runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    assert!(child.wait().unwrap().success(), "git {args:?}");
}
