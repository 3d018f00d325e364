//! What a question asks besides its words, each pinned on a small hand-made root: a date it
//! names, "when", a person it names; and a reflection ranked with its sources.

use crate::util::{Dir, ids, memory};

const NOW: &str = "2026-11-30T12:00:00Z";

/// Recalls `query` at [`NOW`] as JSON ids.
fn recall(dir: &Dir, query: &str) -> Vec<String> {
    ids(&dir.mem(&["--now", NOW, "recall", "--json", "--no-record", "-k", "5", query]).json_found())
}

/// The same text in July and in September: the month the question names comes first, whatever
/// recency says.
#[test]
fn a_question_naming_a_month_ranks_that_months_memory_first() {
    let dir = Dir::new();
    let text = "We went camping by the lake with the kids.\n";
    dir.write("july.md", memory("july", "episodic", 5, "2026-07-12T10:00:00Z", text));
    dir.write("sept.md", memory("sept", "episodic", 5, "2026-09-12T10:00:00Z", text));
    assert_eq!(recall(&dir, "When did we go camping in July?")[0], "july");
    assert_eq!(recall(&dir, "camping by the lake in September")[0], "sept");
    // Without a date, the fresher one leads.
    assert_eq!(recall(&dir, "camping by the lake")[0], "sept");
    let json =
        dir.mem(&["--now", NOW, "recall", "--json", "--no-record", "camping in July"]).json();
    let date = |i: usize| json[i]["components"]["date"].as_f64().unwrap();
    assert_eq!((date(0), date(1)), (1.0, 0.0), "{json}");
    dir.write("mem.toml", "[ranking]\ndate_weight = 0\n");
    assert_eq!(recall(&dir, "When did we go camping in July?")[0], "sept", "the factor off");
}

/// "When" prefers the memory whose text says when, among near-ties.
#[test]
fn a_when_question_prefers_text_that_says_when() {
    let dir = Dir::new();
    let at = "2026-10-01T10:00:00Z";
    dir.write("plain.md", memory("plain", "episodic", 5, at, "Melanie painted the lake.\n"));
    dir.write(
        "dated.md",
        memory("dated", "episodic", 5, at, "Melanie painted the lake last weekend, finally.\n"),
    );
    assert_eq!(recall(&dir, "When did Melanie paint the lake?")[0], "dated");
    assert_eq!(recall(&dir, "Melanie painted the lake")[0], "plain", "shorter, no \"when\"");
}

/// The same words by two people: the one the question names comes first, by source or tag.
#[test]
fn a_name_in_the_question_prefers_that_persons_memories() {
    let dir = Dir::new();
    let by = |id: &str, who: &str| {
        format!(
            "---\nid: {id}\ntype: semantic\nimportance: 5\ncreated: 2026-10-01T10:00:00Z\n\
             {who}\n---\nPrefers small pull requests, reviewed the same day.\n"
        )
    };
    dir.write("ana.md", by("ana-pr", "source: person/ana"));
    dir.write("marek.md", by("marek-pr", "source: person/marek"));
    dir.write("priya.md", by("priya-pr", "tags: [priya]"));
    assert_eq!(recall(&dir, "What does Ana prefer for pull requests?")[0], "ana-pr");
    assert_eq!(recall(&dir, "Marek's pull requests")[0], "marek-pr");
    assert_eq!(recall(&dir, "pull requests Priya prefers")[0], "priya-pr");
    // A lower-case word is not a name, and two names cancel out.
    let hits = dir.mem(&["--now", NOW, "recall", "--json", "--no-record", "ana pull requests"]);
    assert!(hits.json()[0]["components"]["name"] == 1.0, "{}", hits.stdout);
    let two = "pull requests of Ana and Marek";
    let both = dir.mem(&["--now", NOW, "recall", "--json", "--no-record", two]);
    for hit in both.json().as_array().unwrap() {
        assert_eq!(hit["components"]["name"], 1.0, "{}", both.stdout);
    }
}

/// Four observations written within a second, then their reflection: for their shared topic
/// the reflection ranks at or above every source, in every root built the same way (ties in
/// `created` break by content, not by the random part of an id).
#[test]
fn a_reflection_ranks_at_or_above_its_sources_in_every_root() {
    let notes = [
        "The postgres connection pool ran out during the nightly import; raised the pool to 40.",
        "Import job opened a new postgres connection per row; the pool was exhausted in minutes.",
        "Postgres pool exhaustion again during the import: connections leaked when it failed.",
        "Fixed the import to reuse one postgres connection from the pool, released on error.",
    ];
    let mut orders: Vec<Vec<String>> = Vec::new();
    for _ in 0..20 {
        let dir = Dir::new();
        let mut sources = Vec::new();
        for note in notes {
            let out = dir.mem(&["add", "-t", "episodic", "-i", "4", "--json", note]);
            sources.push(out.json()["id"].as_str().unwrap().to_string());
        }
        let written = dir.mem(&["reflect", "--min-cluster", "3", "--json"]).json();
        let reflection = written["written"][0]["id"].as_str().unwrap().to_string();
        let hits = ids(&dir
            .mem(&["recall", "--json", "--no-record", "postgres connection pool import"])
            .json());
        let rank = |id: &String| hits.iter().position(|h| h == id).unwrap();
        for source in &sources {
            assert!(rank(&reflection) < rank(source), "{hits:?}, reflection {reflection}");
        }
        let by_text: Vec<String> = hits
            .iter()
            .filter(|h| **h != reflection)
            .map(|h| notes[sources.iter().position(|s| s == h).unwrap()].to_string())
            .collect();
        orders.push(by_text);
    }
    orders.dedup();
    assert_eq!(orders.len(), 1, "the sources order the same way in every root: {orders:?}");
}

/// A root holding one episode of five garden notes a minute apart (`e0`…`e4`), each holding
/// at most one of the words compost, hose, fence, tomatoes, and a lone note months later
/// (`lone`) that says "fence" twice.
fn garden_episode() -> Dir {
    let dir = Dir::new();
    let turns = [
        "Planning the garden this spring.",
        "Bought compost for the raised beds.",
        "The new hose reaches the far corner.",
        "Painted the fence green.",
        "Planted tomatoes along the south side.",
    ];
    for (i, text) in turns.iter().enumerate() {
        let at = format!("2026-05-02T10:0{i}:00Z");
        dir.write(&format!("e{i}.md"), memory(&format!("e{i}"), "episodic", 5, &at, text));
    }
    let lone = "A fence on sale at the shop, the best fence in town.\n";
    dir.write("lone.md", memory("lone", "episodic", 5, "2026-08-20T10:00:00Z", lone));
    dir
}

/// An episode that holds the question's words between its members lifts them all: a member
/// that holds one of them outranks a lone memory that holds the same word more often, only with
/// the episode prior.
#[test]
fn an_episode_matching_as_a_whole_lifts_its_members() {
    let dir = garden_episode();
    let query = "compost hose fence tomatoes";
    let rank = |hits: &[String], id: &str| hits.iter().position(|h| h == id).unwrap_or(99);
    dir.write("mem.toml", "[ranking]\ncontiguity_weight = 0\nepisode_weight = 0\n");
    let without = recall(&dir, query);
    assert!(rank(&without, "lone") < rank(&without, "e3"), "without the prior: {without:?}");
    dir.write("mem.toml", "[ranking]\ncontiguity_weight = 0\n");
    let with = recall(&dir, query);
    assert!(rank(&with, "e3") < rank(&with, "lone"), "with the prior: {with:?}");
    let json = dir.mem(&["--now", NOW, "recall", "--json", "--no-record", query]).json();
    let unmatched = json.as_array().unwrap().iter().find(|h| h["id"] == "e0").expect("e0 lifted");
    assert!(unmatched["components"]["episode"].as_f64().unwrap() > 0.0, "{unmatched}");
}

/// A question asking for several things ("what tomatoes, hoses… did we buy?") finds them in
/// many episodes, so whole episodes are lifted less: the unmatched member of an episode that
/// holds every word outranks a lone match when the question asks for one thing, not when it
/// asks for several; with `list_episode_share = 1` both questions lift it alike.
#[test]
fn a_question_asking_for_several_things_lifts_whole_episodes_less() {
    let dir = garden_episode();
    let one = "What tomato, hose, fence and compost did we buy?";
    let several = "What tomatoes, hoses, fences and compost did we buy?";
    let rank = |hits: &[String], id: &str| hits.iter().position(|h| h == id).unwrap_or(99);
    let hits = recall(&dir, one);
    assert!(rank(&hits, "e0") < rank(&hits, "lone"), "one thing: {hits:?}");
    let hits = recall(&dir, several);
    assert!(rank(&hits, "lone") < rank(&hits, "e0"), "several things: {hits:?}");
    let episode = |query: &str| {
        let json = dir.mem(&["--now", NOW, "recall", "--json", "--no-record", query]).json();
        let e0 = json.as_array().unwrap().iter().find(|h| h["id"] == "e0").cloned();
        e0.expect("e0 lifted")["components"]["episode"].as_f64().unwrap()
    };
    let (lifted_less, lifted) = (episode(several), episode(one));
    assert!(lifted_less < lifted, "the episode's share: {lifted_less} against {lifted}");
    dir.write("mem.toml", "[ranking]\nlist_episode_share = 1\n");
    assert!((episode(several) - episode(one)).abs() < 1e-9, "a share of 1 changes nothing");
    let explained = dir.mem(&["--now", NOW, "recall", "--explain", "--no-record", several]);
    assert!(!explained.stdout.contains("asks for several"), "{}", explained.stdout);
    dir.write("mem.toml", "");
    let explained = dir.mem(&["--now", NOW, "recall", "--explain", "--no-record", several]);
    assert!(explained.stdout.contains("asks for several things"), "{}", explained.stdout);
}
