//! The team store's read-only layer in the other front ends (issue #58): `mem ui`'s search page
//! lists the team's hits beside the local ones, labelled with project and author, its rows
//! shown as text, and a team memory's own page; the MCP tools `get` (a team key) and `recent`
//! (the memories pushed last) read it, `forget` and `used` refuse it. On a real PostgreSQL
//! (tests/postgres.rs), the machines of tests/team.rs.

use serde_json::json;

use crate::postgres::{PASSWORD, Server};
use crate::team::{Machine, T0, publish_deploy, root};
use crate::util::memory;

/// `mem ui` on `machine`'s root, as that machine's user.
fn ui(machine: &Machine) -> crate::ui::Server {
    crate::ui::Server::launch(&machine.dir, None, |cmd| machine.env(cmd))
}

/// Another machine writes a row straight into the store (whoever reaches the server may):
/// author `<b>mallory</b>`, project `acme/<i>web</i>`, memory `rollback`, whose title and body
/// are HTML.
fn publish_hostile(server: &Server) {
    server.psql(
        "team",
        "INSERT INTO mem_memories (project, id, layer, author, machine, path, kind, importance, \
         created, state, front_matter, title, body, hash) VALUES ('acme/<i>web</i>', 'rollback', \
         'project', '<b>mallory</b>', 'm', 'rollback.md', 'procedural', 6, now(), 'live', '{}', \
         'Rollback <script>alert(1)</script> <img src=x onerror=alert(2)>', \
         E'Roll the blue pipeline back. <script>alert(3)</script>\\n\\n\
         <img src=x onerror=\"alert(4)\"> [click](javascript:alert(5))\\n', 'h')",
    );
}

/// The machine that reads: project `other`, its own memory `lint` of the blue pipeline.
fn reader(server: &Server) -> Machine {
    let cy = Machine::new(server, "cy", "");
    let lint = "# Lint\nThe blue pipeline lints before it deploys.\n";
    root(&cy, "other", &[("lint.md", memory("lint", "semantic", 5, T0, lint))]);
    cy
}

/// Nothing of `body` is markup a hostile row brought.
#[track_caller]
fn inert(body: &str) {
    assert!(!body.contains("<script>alert"), "{body}");
    assert!(!body.contains("<img"), "{body}");
    assert!(!body.contains("<b>mallory"), "{body}");
    assert!(!body.contains("<i>web"), "{body}");
    assert!(!body.to_ascii_lowercase().contains("href=\"javascript:"), "{body}");
}

#[test]
fn the_ui_search_page_shows_the_teams_hits_labelled_and_a_hostile_row_as_text() {
    let Some(mut server) = Server::start() else { return };
    publish_deploy(&server);
    publish_hostile(&server);
    let cy = reader(&server);
    let page = ui(&cy);

    let search = page.get("/?q=blue+pipeline");
    assert_eq!(search.status, 200);
    let body = &search.body;
    // The local hit first, then the team's, each labelled "team" with project and author.
    assert!(body.contains("href=\"memory/lint\""), "{body}");
    assert!(body.contains("Team store (2 memories published by the team)"), "{body}");
    assert!(body.find("memory/lint") < body.find("Team store ("), "{body}");
    assert!(body.contains("<span class=\"layer team\">team</span>"), "{body}");
    assert!(body.contains("<span class=\"project\">acme/api</span>"), "{body}");
    assert!(body.contains("<span class=\"author\">ana</span>"), "{body}");
    assert!(body.contains("href=\"team?project=acme%2Fapi&amp;id=deploy\""), "{body}");
    // The hostile row: every text escaped, labelled as any.
    inert(body);
    let title = "Rollback &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;";
    assert!(body.contains(&format!("id=rollback\">{title}</a>")), "{body}");
    assert!(body.contains("back. &lt;script&gt;alert(3)&lt;/script&gt;"), "{body}");
    assert!(body.contains("<span class=\"author\">&lt;b&gt;mallory&lt;/b&gt;</span>"), "{body}");
    assert!(body.contains("acme/&lt;i&gt;web&lt;/i&gt;"), "{body}");
    assert!(body.contains("href=\"team?project=acme%2F%3Ci%3Eweb%3C%2Fi%3E&amp;id=rollback\""));
    // A type the team has none of: no team hits; one layer or a tag: the team is not asked.
    for query in ["/?q=blue+pipeline&type=semantic", "/?q=blue+pipeline&layer=project"] {
        let only = page.get(query).body;
        assert!(only.contains("memory/lint") && !only.contains("Team store"), "{query}: {only}");
    }

    // A team memory's own page: its whole text, labelled, read only.
    let deploy = page.get("/team?project=acme%2Fapi&id=deploy");
    assert_eq!(deploy.status, 200, "{}", deploy.body);
    let body = &deploy.body;
    assert!(body.contains("<h1>Deploy</h1>"), "{body}");
    assert!(body.contains("Deploy through the blue pipeline, never by hand."), "{body}");
    assert!(body.contains("<span class=\"project\">acme/api</span>"), "{body}");
    assert!(body.contains("<span class=\"author\">ana</span>"), "{body}");
    assert!(body.contains("team:acme/api/deploy"), "{body}");
    assert!(!body.contains("<form") && !body.contains("method=\"post\""), "read only: {body}");
    let hostile = page.get("/team?project=acme%2F%3Ci%3Eweb%3C%2Fi%3E&id=rollback");
    assert_eq!(hostile.status, 200, "{}", hostile.body);
    inert(&hostile.body);
    assert!(hostile.body.contains(&format!("<h1>{title}</h1>")), "{}", hostile.body);
    assert!(hostile.body.contains("&lt;script&gt;alert(3)&lt;/script&gt;"), "{}", hostile.body);
    assert!(hostile.body.contains("javascript:alert(5)"), "the link as text: {}", hostile.body);
    // None of that project and id, or none given.
    assert_eq!(page.get("/team?project=acme%2Fapi&id=nothing").status, 404);
    assert_eq!(page.get("/team?project=acme%2Fapi").status, 400);
    // Nothing posts to a team memory.
    assert_eq!(page.post("/team?project=acme%2Fapi&id=deploy", "").status, 405);

    // The store stopped: the local hits, and why the team's are missing, in one line.
    server.stop();
    let down = page.get("/?q=blue+pipeline");
    assert_eq!(down.status, 200);
    assert!(down.body.contains("href=\"memory/lint\""), "{}", down.body);
    let notice = down.body.lines().find(|l| l.contains("Team store: ")).unwrap_or_default();
    assert!(notice.contains("cannot connect to the team store 127.0.0.1:"), "{}", down.body);
    assert!(notice.contains("; answered from the local layers."), "{}", down.body);
    let gone = page.get("/team?project=acme%2Fapi&id=deploy");
    assert_eq!(gone.status, 503, "{}", gone.body);
    assert!(gone.body.contains("the team store did not answer"), "{}", gone.body);
}

#[test]
fn the_mcp_get_and_recent_read_the_team_layer_and_forget_and_used_refuse_it() {
    let Some(mut server) = Server::start() else { return };
    publish_deploy(&server);
    publish_hostile(&server);
    let cy = reader(&server);
    // The reader's own memory is in the store too: recent's team list leaves it out.
    cy.mem(&["team", "push"]).ok();
    let mut mcp = cy.mcp();
    mcp.initialize();
    // The tools say what they do with the team layer.
    let list = mcp.request("tools/list", json!({}));
    let description = |name: &str| {
        let tools = list["result"]["tools"].as_array().unwrap();
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        tool["description"].as_str().unwrap().to_string()
    };
    assert!(description("get").contains("team memory's key (team:PROJECT/ID"), "{list}");
    assert!(description("recent").contains("{team} lists the live memories"), "{list}");
    for tool in ["forget", "used"] {
        assert!(description(tool).contains("the team layer is read only"), "{list}");
    }

    // recall names each team memory by the key `get` takes.
    let recalled = mcp.ok("recall", json!({ "query": "blue pipeline" }));
    let keys: Vec<&str> =
        recalled["team"].as_array().unwrap().iter().filter_map(|h| h["key"].as_str()).collect();
    assert!(keys.contains(&"team:acme/api/deploy"), "{recalled}");

    let got = mcp.ok("get", json!({ "id": "team:acme/api/deploy" }));
    assert_eq!(got["layer"], "team", "{got}");
    assert_eq!(got["key"], "team:acme/api/deploy");
    assert_eq!(
        (&got["project"], &got["author"], &got["id"]),
        (&"acme/api".into(), &"ana".into(), &"deploy".into())
    );
    assert_eq!(got["title"], "Deploy");
    assert_eq!(got["type"], "procedural");
    assert_eq!(got["importance"], 7);
    assert_eq!(got["body"], "# Deploy\nDeploy through the blue pipeline, never by hand.\n");
    assert!(got["pushed"].is_string(), "{got}");
    // A hostile row is data, as it is in the store.
    let hostile = mcp.ok("get", json!({ "id": "team:acme/<i>web</i>/rollback" }));
    assert_eq!(hostile["author"], "<b>mallory</b>");
    assert!(hostile["body"].as_str().unwrap().contains("<script>alert(3)</script>"), "{hostile}");
    let missing = mcp.tool_error("get", json!({ "id": "team:acme/api/nothing" }));
    assert!(
        missing.contains("the team store has no live memory team:acme/api/nothing"),
        "{missing}"
    );

    // recent: the local memories, then the team's pushed last, newest first, none held here.
    let recent = mcp.ok("recent", json!({}));
    assert_eq!(recent["memories"][0]["id"], "lint", "{recent}");
    let team: Vec<&str> =
        recent["team"].as_array().unwrap().iter().filter_map(|m| m["key"].as_str()).collect();
    assert_eq!(team, ["team:acme/<i>web</i>/rollback", "team:acme/api/deploy"], "{recent}");
    assert_eq!(recent["team"][1]["author"], "ana");
    assert_eq!(recent["team"][1]["layer"], "team");
    assert!(recent["team"][1].get("body").is_none(), "get gives the body: {recent}");
    assert!(recent.get("team_problem").is_none(), "{recent}");
    let one = mcp.ok("recent", json!({ "n": 1 }));
    assert_eq!(one["team"].as_array().map(Vec::len), Some(1), "{one}");
    let semantic = mcp.ok("recent", json!({ "type": "semantic" }));
    assert_eq!(semantic["team"], json!([]), "the team's are procedural: {semantic}");

    // Read only: forget and used refuse a team key, and change nothing.
    let forget = mcp.tool_error("forget", json!({ "id": "team:acme/api/deploy", "reason": "r" }));
    assert!(
        forget.contains("team:acme/api/deploy is a memory of the team store, a read-only layer"),
        "{forget}"
    );
    let used = mcp.tool_error("used", json!({ "ids": ["lint", "team:acme/api/deploy"] }));
    assert!(used.contains("read-only layer") && used.contains("nothing was recorded"), "{used}");
    assert_eq!(server.psql("team", "SELECT state FROM mem_memories WHERE id = 'deploy'"), "live\n");
    let usage = cy.dir.usage_text();
    assert!(!usage.lines().any(|l| l.starts_with("used\t")), "nothing recorded: {usage}");

    // Forgotten on its machine and pushed: no longer read.
    server.psql("team", "UPDATE mem_memories SET state = 'forgotten' WHERE id = 'deploy'");
    let forgotten = mcp.tool_error("get", json!({ "id": "team:acme/api/deploy" }));
    assert!(forgotten.contains("no live memory"), "{forgotten}");
    let recent = mcp.ok("recent", json!({}));
    assert_eq!(recent["team"].as_array().map(Vec::len), Some(1), "{recent}");

    // The store stopped: recent answers with the local layers and says why; get says why.
    server.stop();
    let down = mcp.ok("recent", json!({}));
    assert_eq!(down["memories"][0]["id"], "lint", "{down}");
    assert_eq!(down["team"], json!([]), "{down}");
    let problem = down["team_problem"].as_str().unwrap_or_default();
    assert!(problem.contains("cannot connect to the team store"), "{down}");
    let get = mcp.tool_error("get", json!({ "id": "team:acme/<i>web</i>/rollback" }));
    assert!(get.contains("the team store did not answer: cannot connect to the team store"));
    mcp.finish();
}

/// Row-level security holds for `get` and `recent` as for recall: a role reads only the
/// projects granted to it.
#[test]
fn the_mcp_tools_read_only_the_projects_granted() {
    let Some(server) = Server::start() else { return };
    publish_deploy(&server);
    server.psql("team", &format!("CREATE ROLE bob LOGIN PASSWORD '{PASSWORD}'"));
    // Bob's own project is granted to him: not ana's.
    let owner = Machine::new(&server, "ana", "");
    owner.mem(&["team", "grant", "bob", "acme/web"]).ok();
    let bob = Machine::as_role(&server, "bob", "bob", "");
    root(&bob, "acme/web", &[]);
    let mut mcp = bob.mcp();
    mcp.initialize();
    let hidden = mcp.tool_error("get", json!({ "id": "team:acme/api/deploy" }));
    assert!(hidden.contains("no live memory"), "{hidden}");
    assert_eq!(mcp.ok("recent", json!({}))["team"], json!([]));
    owner.mem(&["team", "grant", "bob", "acme/api"]).ok();
    assert_eq!(mcp.ok("get", json!({ "id": "team:acme/api/deploy" }))["author"], "ana");
    assert_eq!(mcp.ok("recent", json!({}))["team"][0]["key"], "team:acme/api/deploy");
    mcp.finish();
}
