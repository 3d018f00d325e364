//! The engine split by what it does (issue #54): `impl Engine` only in its own module,
//! `crates/mem/src/engine/mod.rs`, and no type of the library with more than 30 public methods.
//! Both read the sources as text, as the layout test does.

use std::collections::BTreeMap;

use crate::layout::{code_lines, sources};

/// Most public methods one type of the library may have.
const MAX_PUBLIC_METHODS: usize = 30;

/// The one file `impl Engine` may be in.
const ENGINE_MODULE: &str = "crates/mem/src/engine/mod.rs";

/// The library's files with their code (docs and tests left out).
fn library() -> Vec<(String, String)> {
    sources()
        .into_iter()
        .filter(|f| f.starts_with("crates/mem/src/"))
        .map(|f| {
            let code = code_lines(&f).join("\n");
            (f, code)
        })
        .collect()
}

/// The type an `impl` line opens a block for (`impl<'a> Foo<'a> {` -> `Foo`), when it is an
/// inherent impl (not `impl Trait for Type`).
fn inherent_impl(line: &str) -> Option<String> {
    let rest = line.strip_prefix("impl")?;
    if !(rest.starts_with(' ') || rest.starts_with('<')) || line.contains(" for ") {
        return None;
    }
    let rest = match rest.strip_prefix('<') {
        Some(generics) => &generics[generics.find('>')? + 1..],
        None => rest,
    };
    let name: String =
        rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// For each type with inherent impl blocks in `files`: its public methods (`pub fn`, not
/// `pub(crate)` or `pub(super)`) and the files its blocks are in.
fn methods(files: &[(String, String)]) -> BTreeMap<String, (usize, Vec<String>)> {
    let mut found: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
    for (rel, code) in files {
        let mut current: Option<String> = None;
        for line in code.lines() {
            if let Some(ty) = inherent_impl(line) {
                let entry = found.entry(ty.clone()).or_default();
                if !entry.1.contains(rel) {
                    entry.1.push(rel.clone());
                }
                current = Some(ty);
            } else if line.starts_with('}') {
                current = None;
            } else if let Some(ty) = &current
                && line.starts_with("    pub fn ")
            {
                found.get_mut(ty).expect("opened above").0 += 1;
            }
        }
    }
    found
}

/// What breaks the split in `files`: types over [`MAX_PUBLIC_METHODS`] public methods, and
/// `impl Engine` blocks outside [`ENGINE_MODULE`].
fn split_problems(files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (ty, (public, in_files)) in methods(files) {
        if public > MAX_PUBLIC_METHODS {
            problems
                .push(format!("{ty} has {public} public methods (at most {MAX_PUBLIC_METHODS})"));
        }
        if ty == "Engine" {
            for rel in in_files.iter().filter(|f| *f != ENGINE_MODULE) {
                problems.push(format!("impl Engine in {rel}, outside {ENGINE_MODULE}"));
            }
        }
    }
    problems
}

#[test]
fn the_engine_is_split_by_what_it_does() {
    let files = library();
    let problems = split_problems(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The parts the split made are there, each with methods of its own.
    let found = methods(&files);
    for part in ["Engine", "Files", "Usage", "Sessions", "Vectors", "Code"] {
        assert!(found.get(part).is_some_and(|(n, _)| *n > 0), "{part} has no public method");
    }
}

#[test]
fn an_engine_grown_back_is_caught() {
    let file = |rel: &str, code: String| (rel.to_string(), code);
    let many: String = (0..31).map(|i| format!("    pub fn op{i}(&self) {{}}\n")).collect();
    let planted = [
        file(ENGINE_MODULE, "impl Engine {\n    pub fn open() {}\n}\n".to_string()),
        file("crates/mem/src/engine/recall.rs", "impl Engine {\n    fn recall() {}\n}\n".into()),
        file("crates/mem/src/big.rs", format!("impl<'a> Big<'a> {{\n{many}}}\n")),
        file("crates/mem/src/fine.rs", "impl Display for Big<'_> {\n    pub fn x() {}\n}\n".into()),
    ];
    assert_eq!(
        split_problems(&planted),
        [
            "Big has 31 public methods (at most 30)",
            "impl Engine in crates/mem/src/engine/recall.rs, outside crates/mem/src/engine/mod.rs",
        ]
    );
}
