//! The engine as a library (issue #54): a program that is not `mem`'s command line opens the
//! memory for a folder of a project with its layers, recalls, and records a use, through the
//! library's public API alone (this file is another crate; it runs no `mem` process).

use mem::open::{Surroundings, locate, open};
use mem::store::{Layer, RootSource};
use mem::{MemoryType, NewMemory, RecallOptions};

#[test]
fn a_program_opens_a_project_recalls_and_records_a_use() {
    let top = tempfile::tempdir().unwrap();
    let now: jiff::Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
    // A project with its root in `.memory/`, opened from a subfolder; a user layer beside it.
    let project = top.path().join("shop");
    let folder = project.join("src/billing");
    std::fs::create_dir_all(&folder).unwrap();
    mem::open::make_root(&project.join(mem::store::PROJECT_DIR), now).unwrap();
    let surroundings = Surroundings {
        cwd: folder,
        user_layer: Some(top.path().join("me")),
        ..Surroundings::default()
    };
    let found = locate(&surroundings).unwrap();
    assert_eq!(found.root, project.join(".memory"));
    assert_eq!(found.source, RootSource::Ancestor);

    let mut opened = open(&surroundings, now).unwrap();
    assert_eq!(opened.made, [top.path().join("me")], "the user layer's root, made on first use");
    assert!(opened.warnings.is_empty(), "{:?}", opened.warnings);
    let layers = &mut opened.layers;
    let added = layers
        .project()
        .files
        .add(
            NewMemory {
                text: "Invoices are numbered per year, never reused".into(),
                kind: MemoryType::Semantic,
                importance: 7,
                tags: vec!["billing".into()],
                title: None,
                source: None,
            },
            now,
        )
        .unwrap();
    let options = RecallOptions { limit: 20, ..Default::default() };
    let recall =
        layers.recall("how are invoices numbered", &options, now, &mem::progress::Silent).unwrap();
    let hit = recall.recall.hits.first().expect("a hit");
    assert_eq!(hit.record.id, added.id);
    assert_eq!(hit.layer.unwrap_or(Layer::Project), Layer::Project);

    layers.project().used(std::slice::from_ref(&added.id), now, false).unwrap();
    let project = layers.project();
    let uses = project.usage.view(&project.files).unwrap().use_counts();
    assert_eq!(uses.get(&added.id), Some(&1));
}
