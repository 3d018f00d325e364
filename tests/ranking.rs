//! The ranking signals, each pinned on a small hand-made root: query fillers, coverage, and
//! temporal contiguity (with its no-harm case).

use crate::util::{Dir, ids, memory};

/// Recalls `query` as JSON ids (an empty list when nothing matches).
fn recall(dir: &Dir, query: &str) -> Vec<String> {
    ids(&dir.mem(&["recall", "--json", "--no-record", "-k", "3", query]).json_found())
}

/// Words like did/when/you decided the ranking: a short turn that matched only them beat the
/// memory about the question's subject.
#[test]
fn question_words_do_not_decide_the_ranking() {
    let dir = Dir::new();
    dir.write(
        "a.md",
        memory(
            "chat",
            "episodic",
            5,
            "2026-01-01T00:00:00Z",
            "Wow, did you make that? When did you start?\n",
        ),
    );
    dir.write("b.md", memory("sunrise", "episodic", 5, "2026-02-01T00:00:00Z", "Melanie painted a sunrise over the lake, a big canvas for the hallway and the stairs.\n"));
    assert_eq!(recall(&dir, "When did you paint a sunrise?")[0], "sunrise");
    // A query of fillers only still matches on them.
    assert_eq!(recall(&dir, "when did you")[0], "chat");
}

/// One rare word outweighed a memory that holds most of the query: plain BM25 puts the short
/// note with "exhausted" first, coverage the long one with four of the five words.
#[test]
fn a_memory_holding_most_of_the_query_beats_one_rare_word() {
    let dir = Dir::new();
    for i in 0..8 {
        let text = format!("postgres connection notes, part {i}, about the database\n");
        dir.write(
            &format!("n{i}.md"),
            memory(&format!("n{i}"), "semantic", 5, "2026-01-01T00:00:00Z", &text),
        );
    }
    dir.write(
        "rare.md",
        memory("rare", "semantic", 5, "2026-01-01T00:00:00Z", "The queue is exhausted.\n"),
    );
    let most = "The postgres connection pool had no free slot left under load during the Monday \
        release; we raised the pool size, added a queue in front of the workers, moved the \
        nightly reports to the replica and wrote a runbook for the on-call engineer. The \
        dashboards now show waiting clients, the alert fires at eighty percent, and the team \
        reviews the limits every quarter with the platform group. Next time, check the graphs \
        of the last deploy first and page the database owner before restarting anything in \
        production.\n";
    dir.write("most.md", memory("most", "semantic", 5, "2026-01-01T00:00:00Z", most));
    let query = "postgres connection pool size exhausted";
    assert_eq!(recall(&dir, query)[0], "most");
    dir.write("mem.toml", "[ranking]\ncoverage_weight = 0.0\n");
    assert_eq!(recall(&dir, query)[0], "rare", "plain BM25");
}

/// Three turns of one conversation, `gap` seconds apart.
fn conversation(dir: &Dir, gap: i64) {
    let at = |i: i64| jiff::Timestamp::from_second(1_767_225_600 + i * gap).unwrap().to_string();
    dir.write(
        "t1.md",
        memory("t1", "episodic", 5, &at(0), "Melanie: here is my sunrise picture from the trip.\n"),
    );
    dir.write(
        "t2.md",
        memory("t2", "episodic", 5, &at(1), "Caroline: it is beautiful! Where was it?\n"),
    );
    dir.write(
        "t3.md",
        memory("t3", "episodic", 5, &at(2), "Melanie: at the lake, last summer, with the kids.\n"),
    );
    dir.write(
        "other.md",
        memory("other", "episodic", 5, "2025-06-01T00:00:00Z", "A note about the car.\n"),
    );
}

/// The answer refers back to the question's subject without its words: it is recalled with
/// the turn it answers, when the turns are minutes apart.
#[test]
fn the_turns_around_a_match_are_recalled_with_it() {
    let dir = Dir::new();
    conversation(&dir, 60);
    let found = recall(&dir, "sunrise picture");
    assert_eq!(found[0], "t1");
    assert!(found.contains(&"t2".to_string()) && found.contains(&"t3".to_string()), "{found:?}");
    // The episode prior alone brings them too (the episode as a whole matches).
    dir.write("mem.toml", "[ranking]\ncontiguity_weight = 0.0\n");
    assert_eq!(recall(&dir, "sunrise picture").len(), 3, "episode prior only");
    dir.write("mem.toml", "[ranking]\ncontiguity_weight = 0.0\nepisode_weight = 0.0\n");
    assert_eq!(recall(&dir, "sunrise picture"), ["t1"], "neither");
}

/// Memories far apart in time are unrelated: nothing is passed on.
#[test]
fn memories_far_apart_in_time_pass_nothing_on() {
    let dir = Dir::new();
    conversation(&dir, 86_400);
    assert_eq!(recall(&dir, "sunrise picture"), ["t1"]);
}

/// Relevance is divided by the best match, so the top hit always has 1; strength tells a weak
/// match from a good one, and `--min-strength` (the default of `mem context`) leaves weak ones
/// out.
#[test]
fn strength_tells_nothing_relevant_from_a_weak_match() {
    let dir = Dir::new();
    dir.write(
        "good.md",
        memory(
            "good",
            "semantic",
            5,
            "2026-01-01T00:00:00Z",
            "The kafka cluster needs three zookeeper nodes.\n",
        ),
    );
    dir.write(
        "weak.md",
        memory(
            "weak",
            "semantic",
            9,
            "2026-01-01T00:00:00Z",
            "A note that mentions a cluster of servers.\n",
        ),
    );
    let hits = dir.mem(&["recall", "--json", "--no-record", "kafka zookeeper nodes"]).json();
    assert_eq!(hits[0]["id"], "good");
    assert_eq!(hits[0]["strength"], 1.0);
    let weak =
        dir.mem(&["recall", "--json", "--no-record", "kafka zookeeper cluster rebalance"]).json();
    let strength_of = |id: &str| {
        weak.as_array().unwrap().iter().find(|h| h["id"] == id).unwrap()["strength"]
            .as_f64()
            .unwrap()
    };
    assert!(strength_of("weak") < 0.1 && strength_of("good") > 0.4, "{weak}");
    let cut = dir.mem(&[
        "recall",
        "--json",
        "--no-record",
        "--min-strength",
        "0.3",
        "kafka zookeeper cluster rebalance",
    ]);
    assert_eq!(ids(&cut.json()), ["good"]);
    let none = dir.mem(&["recall", "--min-strength", "0.3", "cluster of tulips"]);
    assert_eq!(none.code, 1, "{}", none.stdout);
    let context =
        dir.mem(&["context", "--task", "kafka zookeeper cluster rebalance", "--key", "0"]);
    assert!(
        context.ok().contains("`good`") && !context.stdout.contains("`weak`"),
        "{}",
        context.stdout
    );
}

/// Ranking recency counts from the last use (`mem used`), never from a retrieval: recalls that
/// record their hits, synced or not, leave later rankings as they were (issue 13).
#[test]
fn a_use_refreshes_recency_and_retrievals_never_do() {
    let dir = Dir::new();
    dir.mem(&["init", "."]).ok();
    let body = "How to rotate the API keys of the payment gateway.\n";
    dir.write("old.md", memory("old", "procedural", 5, "2024-01-01T00:00:00Z", body));
    dir.write("new.md", memory("new", "procedural", 5, "2026-11-01T00:00:00Z", body));
    let ranked = |dir: &Dir| recall(dir, "rotate payment gateway keys");
    assert_eq!(ranked(&dir), ["new", "old"], "newer first among equals");
    // Recalls that record their retrievals, old at rank 2 each time, then a sync: no change.
    for _ in 0..5 {
        dir.mem(&["recall", "--json", "-k", "3", "rotate payment gateway keys"]).json();
        dir.mem(&["recall", "--json", "-k", "1", "--type", "procedural", "rotate keys old"]);
    }
    dir.mem(&["sync"]).ok();
    assert_eq!(ranked(&dir), ["new", "old"], "retrievals do not refresh recency");
    // One use does, before and after the sync that writes it to the usage files.
    dir.mem(&["used", "--no-sync", "old"]).ok();
    assert_eq!(ranked(&dir), ["old", "new"], "a use refreshes recency");
    dir.mem(&["sync"]).ok();
    assert_eq!(ranked(&dir), ["old", "new"], "and stays after sync");
    // The cached last-use map is derived state: without it, the same ranking.
    std::fs::remove_file(dir.path().join(".mem/last-used.bin")).unwrap();
    assert_eq!(ranked(&dir), ["old", "new"]);
}

/// #24, defect 7: the digests of sessions that asked about a fact matched the question better
/// than the fact that answers it (a digest repeats the session's requests): after five
/// sessions asking about the package manager, four digests came before "Use pnpm". A captured
/// digest's relevance counts `[ranking] digest_weight` (0.5): the fact comes first for its
/// question, and a digest still leads where only it matches.
#[test]
fn a_fact_outranks_the_digests_of_sessions_that_asked_for_it() {
    let dir = Dir::new();
    dir.mem(&["init"]).ok();
    let facts = [
        ("pnpm", "Use pnpm, never npm, for the web client: the lockfile is pnpm-lock.yaml"),
        ("staging", "The staging database is db-stage-2, port 6543, read-only for developers"),
        ("release", "To cut a release, tag vX.Y.Z on main: CI publishes the package and changelog"),
    ];
    for (name, text) in facts {
        dir.write(
            &format!("{name}.md"),
            memory(name, "semantic", 5, "2026-11-01T00:00:00Z", &format!("{text}\n")),
        );
    }
    let questions = [
        ("pnpm", "which package manager do we use for the web client?"),
        ("staging", "where is the staging database and which port?"),
        ("release", "how do we cut a release and publish the package?"),
    ];
    // Five sessions per question, each captured from its transcript as an agent's hook does.
    for (n, (name, question)) in questions.iter().cycle().take(15).enumerate() {
        let session = format!("s{n}-{name}");
        let day = 10 + n;
        let transcript = dir.write(
            &format!("transcripts/{session}.jsonl"),
            format!(
                "{{\"type\":\"user\",\"sessionId\":\"{session}\",\"timestamp\":\"2026-11-{day}T10:00:00Z\",\"message\":{{\"role\":\"user\",\"content\":\"{question}\"}}}}\n\
                 {{\"type\":\"assistant\",\"timestamp\":\"2026-11-{day}T10:01:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"Looking at the repository.\"}}]}}}}\n"
            ),
        );
        let payload = serde_json::json!({
            "session_id": session, "transcript_path": transcript, "hook_event_name": "Stop",
            "cwd": dir.path(),
        });
        dir.mem(&["capture", &payload.to_string()]).ok();
    }
    for (name, question) in questions {
        let found = recall(&dir, question);
        assert_eq!(found[0], name, "{question}: {found:?}");
    }
    // What only a digest answers (which session asked it) still has a digest in its top 3.
    let found = recall(&dir, "the session where I asked about the staging database port");
    let digest = |id: &String| id.starts_with("session-s") && id.ends_with("-staging");
    assert!(found.iter().take(3).any(digest), "{found:?}");
    // Issue #39, item 2: the weight is not what keeps them there. With it at 1 (the ranking
    // before it), these sessions, which only asked and were answered, still come after the
    // fact that answers the question: no digest of a session that did no work ranks above a
    // fact holding a word of the question.
    dir.write("mem.toml", "[ranking]\ndigest_weight = 1.0\n");
    for (name, question) in questions {
        let found = recall(&dir, question);
        assert_eq!(found[0], name, "{question}: {found:?}");
    }
}
