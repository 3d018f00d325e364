use crate::util::{Dir, memory};

#[test]
fn eval_reports_known_metrics() {
    let dir = Dir::new();
    dir.write(
        "a.md",
        memory(
            "a",
            "semantic",
            5,
            "2026-01-01T00:00:00Z",
            "Redis evicts session keys under memory pressure.\n",
        ),
    );
    dir.write(
        "b.md",
        memory(
            "b",
            "procedural",
            10,
            "2026-11-01T00:00:00Z",
            "# Deploy\nDeploy checklist: tag, deploy, verify.\n",
        ),
    );
    dir.write(
        "c.md",
        memory("c", "procedural", 1, "2024-01-01T00:00:00Z", "Rollback after a bad deploy.\n"),
    );
    dir.write(
        "queries.jsonl",
        concat!(
            "{\"qid\":\"q1\",\"query\":\"redis eviction\",\"type\":\"keyword\",\"relevant\":[\"a\"]}\n",
            "{\"qid\":\"q2\",\"query\":\"deploy\",\"type\":\"keyword\",\"relevant\":[\"c\"]}\n",
            "{\"qid\":\"q3\",\"query\":\"kubernetes\",\"type\":\"paraphrase\",\"relevant\":[\"a\"]}\n",
        ),
    );
    let queries = dir.path().join("queries.jsonl");
    let report = dir.mem(&["eval", queries.to_str().unwrap(), "--json"]).json();
    let overall = &report["overall"];
    assert_eq!(overall["queries"], 3);
    assert_eq!(overall["mrr"], 0.5, "1, 1/2 and 0: {report}");
    assert_eq!(overall["recall_at_5"].as_f64().unwrap(), 2.0 / 3.0);
    let q2 = &report["queries"][1];
    assert_eq!(q2["found_at"], serde_json::json!([2]));
    assert_eq!(q2["ndcg_at_10"].as_f64().unwrap(), 1.0 / 3f64.log2());
    assert_eq!(report["by_type"]["keyword"]["mrr"], 0.75);
    assert_eq!(report["by_type"]["paraphrase"]["recall_at_20"], 0.0);
    assert_eq!(report["queries"][2]["missed"], serde_json::json!(["a"]));

    let table = dir.mem(&["eval", queries.to_str().unwrap()]);
    let text = table.ok();
    assert!(text.lines().next().unwrap().contains("nDCG@10"), "{text}");
    assert!(text.contains("q3: a"), "{text}");

    dir.write("bad.jsonl", "{\"qid\":\"x\",\"query\":\"y\",\"relevant\":[\"nope\"]}\n");
    let out = dir.mem(&["eval", dir.path().join("bad.jsonl").to_str().unwrap()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("query x: relevant id \"nope\""), "{}", out.stderr);
}
