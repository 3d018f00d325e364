//! Unit tests of the health checks: transcripts on disk against sessions captured.

use super::*;
use crate::agent::{claude, inside};

/// Sources of transcript folders only.
fn folders(folders: Vec<PathBuf>) -> Sources {
    Sources { folders, stores: Vec::new() }
}

#[test]
fn capture_log_window_and_unreadable_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("capture.log");
    std::fs::write(
        &log,
        concat!(
            "{\"at\":\"2026-11-29T10:00:00Z\",\"status\":\"ok\",\"session_id\":\"old\"}\n",
            "{\"at\":\"2026-11-30T10:00:00Z\",\"status\":\"ok\",\"session_id\":\"a\"}\n",
            "{\"at\":\"2026-11-30T11:00:00Z\",\"status\":\"error\",\"error\":\"bad payload\"}\n",
            "not json\n",
        ),
    )
    .unwrap();
    let s = capture_summary(&log, "2026-11-30T12:00:00Z".parse().unwrap(), 24).unwrap();
    assert_eq!((s.ok, s.errors, s.unreadable), (1, 1, 1));
    assert_eq!(s.last_error, Some(("2026-11-30T11:00:00Z".into(), "bad payload".into())));
    assert_eq!(s.sessions, ["a", "old"]);
    let none = capture_summary(&dir.path().join("nope"), Timestamp::UNIX_EPOCH, 24).unwrap();
    assert!(!none.present && none.ok());
}

#[test]
fn the_project_of_a_root() {
    assert_eq!(project_dir(Path::new("/work/shop/.memory")), Path::new("/work/shop"));
    assert_eq!(project_dir(Path::new("/work/shop/.memory/")), Path::new("/work/shop"));
    assert_eq!(project_dir(Path::new("/work/shop/./.memory")), Path::new("/work/shop"));
    assert_eq!(project_dir(Path::new("/home/ana/mem")), Path::new("/home/ana/mem"));
    assert_eq!(project_dir(Path::new(".memory")), Path::new("."));
    assert_eq!(project_dir(Path::new("/")), Path::new("/"));
}

/// A Codex rollout's first line, `session_meta`, with `extra` fields in its payload.
fn rollout(id: &str, cwd: &str, extra: &str) -> String {
    format!(
        "{{\"timestamp\":\"2026-11-30T09:00:00.000Z\",\"type\":\"session_meta\",\"payload\":\
         {{\"id\":\"{id}\",\"timestamp\":\"2026-11-30T09:00:00.000Z\",\"cwd\":\"{cwd}\",\
         \"originator\":\"codex_cli_rs\",\"cli_version\":\"0.63.0\"{extra}}}}}\n\
         {{\"timestamp\":\"2026-11-30T09:00:01.000Z\",\"type\":\"event_msg\",\"payload\":\
         {{\"type\":\"user_message\",\"message\":\"hi\"}}}}\n"
    )
}

#[test]
fn only_the_main_sessions_of_the_project_count() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("shop");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let dir = tmp.path().join("transcripts");
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let main = "4b1c0d9e-0000-4000-8000-000000000001";
    write(&format!("claude/{main}.jsonl"), "{}\n");
    write(&format!("claude/{main}/subagents/agent-a1b2c3.jsonl"), "{}\n");
    write("claude/agent-d4e5f6.jsonl", "{}\n");
    write("claude/notes.txt", "not a transcript");
    let ours = "019a2d7a-0000-7000-8000-00000000000a";
    let src = project.join("src");
    write(
        &format!("codex/2026/11/30/rollout-2026-11-30T09-00-00-{ours}.jsonl"),
        &rollout(ours, src.to_str().unwrap(), ",\"source\":\"cli\""),
    );
    let theirs = "019a2d7a-0000-7000-8000-00000000000b";
    write(
        &format!("codex/2026/11/30/rollout-2026-11-30T10-00-00-{theirs}.jsonl"),
        &rollout(theirs, "/elsewhere/shop-old", ""),
    );
    let sibling = "019a2d7a-0000-7000-8000-00000000000c";
    let beside = format!("{}-old", project.display());
    write(
        &format!("codex/2026/11/30/rollout-2026-11-30T11-00-00-{sibling}.jsonl"),
        &rollout(sibling, &beside, ""),
    );
    let review = "019a2d7a-0000-7000-8000-00000000000d";
    write(
        &format!("codex/2026/11/30/rollout-2026-11-30T12-00-00-{review}.jsonl"),
        &rollout(review, project.to_str().unwrap(), ",\"source\":{\"subagent\":\"review\"}"),
    );
    let garbage = "019a2d7a-0000-7000-8000-00000000000e";
    write(&format!("codex/rollout-2026-11-30T13-00-00-{garbage}.jsonl"), "not json\n");

    let found = transcripts(&folders(vec![dir.clone()]), &project).unwrap();
    let sessions: Vec<(&str, Agent)> =
        found.sessions.values().map(|s| (s.session_id.as_str(), s.agent)).collect();
    assert_eq!(sessions, [(ours, Agent::Codex), (main, Agent::Claude)]);
    assert_eq!((found.subagents, found.other_projects), (3, 3));

    let cov = coverage(found, &[main.to_string()]);
    assert_eq!((cov.found, cov.captured, cov.subagents, cov.other_projects), (2, 1, 3, 3));
    assert_eq!(cov.gaps.len(), 1);
    assert_eq!((cov.gaps[0].session_id.as_str(), cov.gaps[0].agent), (ours, Agent::Codex));
    let json = serde_json::to_value(&cov.gaps[0]).unwrap();
    assert_eq!(json["agent"], "codex");

    // A folder named `subagents` given as the transcripts folder holds no session.
    let subagents = dir.join(format!("claude/{main}/subagents"));
    let only = transcripts(&folders(vec![subagents]), &project).unwrap();
    assert_eq!((only.sessions.len(), only.subagents), (0, 1));
}

/// #24, defect 3: Claude Code files a session started in a subfolder under a folder named
/// after that subfolder.
#[test]
fn the_claude_folders_of_a_project_and_its_subfolders() {
    assert_eq!(claude::folder_name(Path::new("/tmp/a.b/my_repo")), "-tmp-a-b-my-repo");
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("shop");
    let projects = tmp.path().join("projects");
    let name = claude::folder_name(&project);
    let session = |folder: &str, id: &str, cwd: &Path| {
        let dir = projects.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let line = serde_json::json!({"type": "user", "cwd": cwd, "sessionId": id});
        let queued = "{\"type\":\"queue-operation\"}\n";
        std::fs::write(dir.join(format!("{id}.jsonl")), format!("{queued}{line}\n")).unwrap();
    };
    let (top, sub, other) = (
        "4b1c0d9e-0000-4000-8000-000000000001",
        "4b1c0d9e-0000-4000-8000-000000000002",
        "4b1c0d9e-0000-4000-8000-000000000003",
    );
    session(&name, top, &project);
    session(&format!("{name}-src"), sub, &project.join("src"));
    // Another repository whose name extends this one's: `shop-old`.
    session(&format!("{name}-old"), other, &tmp.path().join("shop-old"));
    std::fs::create_dir_all(projects.join("-elsewhere")).unwrap();
    let folders = claude::folders(&projects, &project);
    assert_eq!(folders.len(), 3, "{folders:?}");
    let found = transcripts(&super::Sources { folders, stores: Vec::new() }, &project).unwrap();
    let ids: Vec<&str> = found.sessions.keys().map(String::as_str).collect();
    assert_eq!(ids, [top, sub]);
    assert_eq!(found.other_projects, 1);
}

#[test]
fn a_codex_cwd_is_inside_the_project_through_links_too() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("shop");
    std::fs::create_dir_all(project.join("api")).unwrap();
    assert!(inside(&project, &project));
    assert!(inside(&project.join("api"), &project));
    assert!(!inside(&tmp.path().join("shop-old"), &project));
    #[cfg(unix)]
    {
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&project, &link).unwrap();
        assert!(inside(&link.join("api"), &project));
    }
}
