//! The team store's vectors (issue #58, items 2 and 3) with the real model on a real
//! PostgreSQL: a push sends each row's vector, taking the index's where the index embedded the
//! very text sent; recall compares the question's vector with the rows of the same model only.

use crate::team::{Machine, T0, root};
use crate::util::memory;

/// A machine of `author` whose user configuration names the model too.
fn with_model(server: &crate::postgres::Server, author: &'static str) -> Machine {
    let model = crate::util::model_dir().display().to_string();
    Machine::new(server, author, &format!("\n[embed]\nmodel_dir = \"{model}\"\n"))
}

#[test]
fn vectors_travel_with_their_model_and_another_models_are_never_compared() {
    let Some(server) = crate::postgres::Server::start() else { return };
    let ana = with_model(&server, "ana");
    let deploy = "# Deploy\nDeploy through the blue pipeline, never by hand.\n";
    let cache = "# Cache\nThe cache is warmed when the service starts.\n";
    let token = "# Token\nThe staging token is password=hunter2hunter2 for now.\n";
    root(
        &ana,
        "acme/api",
        &[
            ("deploy.md", memory("deploy", "procedural", 7, T0, deploy)),
            ("cache.md", memory("cache", "semantic", 5, T0, cache)),
            ("token.md", memory("token", "semantic", 5, T0, token)),
        ],
    );
    let init = ana.mem(&["team", "init"]);
    assert!(init.ok().contains("indexed vectors of length 384 (HNSW, cosine)"), "{init:?}");
    ana.mem(&["index"]).ok();
    // The index embedded the texts of deploy and cache as they are sent; token's text is sent
    // redacted, so the model embeds what is sent.
    let pushed = ana.mem(&["team", "push"]);
    assert!(
        pushed.ok().contains("pushed 3 memories to the team store as acme/api (0 unchanged, 3 with vectors, 2 of them the index's)"),
        "{pushed:?}"
    );
    let rows = server.psql("team", "SELECT DISTINCT model || ' ' || dim FROM mem_memories");
    assert!(rows.starts_with("384d-") && rows.ends_with(" 384\n"), "{rows}");
    // A row whose vector is deploy's exactly, under another model's id: never compared.
    server.psql(
        "team",
        "INSERT INTO mem_memories (project, id, layer, author, machine, path, kind, importance, \
         created, state, front_matter, title, body, hash, model, dim, embedding) SELECT project, \
         'impostor', layer, 'mallory', machine, path, kind, importance, created, state, \
         front_matter, 'Zebra', 'Unrelated zebra text.', 'x', 'other-model', dim, embedding \
         FROM mem_memories WHERE id = 'deploy'",
    );

    let bo = with_model(&server, "bo");
    root(&bo, "acme/web", &[]);
    let out = bo.mem(&["recall", "--json", "how do we ship a release to production"]);
    let json = out.json_found();
    let team: Vec<&serde_json::Value> =
        json.as_array().unwrap().iter().filter(|h| h["layer"] == "team").collect();
    let ids: Vec<&str> = team.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert!(!ids.contains(&"impostor"), "another model's vector compared: {ids:?}");
    assert_eq!(ids.first(), Some(&"deploy"), "{out:?}");
    let cosine = |id: &str| {
        let hit = team.iter().find(|h| h["id"] == id).unwrap();
        hit["cosine"].as_f64().unwrap_or_else(|| panic!("{id} without a cosine: {hit}"))
    };
    assert!(cosine("deploy") > cosine("cache"), "{out:?}");
}
