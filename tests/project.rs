use crate::util::Dir;

/// A throw-away repository: a README, docs, dependencies with Markdown of their own.
fn repository() -> Dir {
    let dir = Dir::new();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir.write("README.md", "# Shop\n\nNo front-matter here.\n");
    dir.write("docs/guide.md", "# Guide\n");
    dir.write("node_modules/left-pad/README.md", "# left-pad\n");
    dir.write("src/app/main.rs", "fn main() {}\n");
    dir
}

#[test]
fn a_project_root_keeps_memories_in_its_folder_and_never_reads_the_repository() {
    let repo = repository();
    let init = repo.mem_in("src/app", &["init", "--project"], "");
    assert!(init.ok().starts_with("initialised project memory root "), "{}", init.stdout);
    assert!(repo.path().join(".memory/mem.toml").is_file());
    assert_eq!(repo.read(".memory/.gitignore"), ".mem/\n");

    let added =
        repo.mem_in("src/app", &["add", "--json", "Decision: the shop uses Postgres 16"], "");
    let path = added.json()["path"].as_str().unwrap().to_string();
    assert!(repo.path().join(".memory").join(&path).is_file(), "{path}");
    let listed = repo.mem_in("docs", &["list", "--json"], "").json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let health = repo.mem_in(".", &["health"], "");
    assert_eq!(health.code, 0, "{health:?}");
    assert!(health.stdout.contains("✓ files     every memory file parses"), "{}", health.stdout);
    let found = repo.mem_in("node_modules", &["recall", "--json", "postgres"], "").json();
    assert_eq!(crate::util::ids(&found).len(), 1, "{found}");
    // The repository's own files are untouched.
    assert_eq!(repo.read("README.md"), "# Shop\n\nNo front-matter here.\n");
    assert!(!repo.path().join(".mem").exists());

    // Twice: nothing overwritten.
    let again = repo.mem_in(".", &["init", "--project"], "");
    assert!(again.ok().contains("is already a memory root"), "{}", again.stdout);
}

#[test]
fn init_at_the_top_of_a_repository_warns_and_points_to_the_project_folder() {
    let repo = repository();
    let out = repo.mem_in(".", &["init"], "");
    out.ok();
    assert!(out.stderr.contains("`mem init --project`"), "{}", out.stderr);
    let out = repo.mem_in(".", &["init", "--project", "elsewhere"], "");
    assert_eq!(out.code, 2, "{out:?}");
}
