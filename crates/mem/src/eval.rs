//! Recall-quality evaluation: labelled queries in, Recall@k, nDCG@10, MRR and latency out.
//!
//! The query file is JSON lines: `{"qid": "q1", "query": "...", "relevant": ["id", ...]}`, with
//! an optional `"type"` used to break the figures down. Relevance is binary.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// One labelled query.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LabelledQuery {
    /// Query id, unique in the file.
    pub qid: String,
    /// The query text.
    pub query: String,
    /// Optional category (keyword, paraphrase...).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Ids of the memories that answer it.
    pub relevant: Vec<String>,
}

/// Parses a JSON-lines query file; blank lines are skipped. Errors name the line.
pub fn parse_queries(text: &str) -> Result<Vec<LabelledQuery>> {
    let mut queries: Vec<LabelledQuery> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: LabelledQuery = serde_json::from_str(line)
            .map_err(|e| Error::QueryFile(format!("line {}: {e}", i + 1)))?;
        if q.relevant.is_empty() {
            return Err(Error::QueryFile(format!(
                "line {}: query {} has no relevant ids",
                i + 1,
                q.qid
            )));
        }
        if queries.iter().any(|p| p.qid == q.qid) {
            return Err(Error::QueryFile(format!(
                "line {}: query id {} is used twice",
                i + 1,
                q.qid
            )));
        }
        queries.push(q);
    }
    if queries.is_empty() {
        return Err(Error::QueryFile("the query file has no queries".into()));
    }
    Ok(queries)
}

/// The figures of one query.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueryResult {
    /// Query id.
    pub qid: String,
    /// Category, if given.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Fraction of the relevant memories in the top 5.
    pub recall_at_5: f64,
    /// ... in the top 10.
    pub recall_at_10: f64,
    /// ... in the top 20.
    pub recall_at_20: f64,
    /// Normalised discounted cumulative gain over the top 10.
    pub ndcg_at_10: f64,
    /// 1 / rank of the first relevant memory (0 when none is returned).
    pub reciprocal_rank: f64,
    /// Ranks (1-based) at which relevant memories were returned.
    pub found_at: Vec<usize>,
    /// Relevant ids not returned at all.
    pub missed: Vec<String>,
    /// Time of the whole recall call, in milliseconds.
    pub latency_ms: f64,
}

/// Scores one ranked answer (`ranked` ids, best first) against `query`.
pub fn score_query(query: &LabelledQuery, ranked: &[String], latency_ms: f64) -> QueryResult {
    let found_at: Vec<usize> = ranked
        .iter()
        .enumerate()
        .filter(|(_, id)| query.relevant.contains(id))
        .map(|(i, _)| i + 1)
        .collect();
    let total = query.relevant.len() as f64;
    let recall = |k: usize| found_at.iter().filter(|&&r| r <= k).count() as f64 / total;
    let gain = |rank: usize| 1.0 / ((rank + 1) as f64).log2();
    let dcg: f64 = found_at.iter().filter(|&&r| r <= 10).map(|&r| gain(r)).sum();
    let ideal: f64 = (1..=query.relevant.len().min(10)).map(gain).sum();
    let missed = query.relevant.iter().filter(|id| !ranked.contains(id)).cloned().collect();
    QueryResult {
        qid: query.qid.clone(),
        kind: query.kind.clone(),
        recall_at_5: recall(5),
        recall_at_10: recall(10),
        recall_at_20: recall(20),
        ndcg_at_10: if ideal > 0.0 { dcg / ideal } else { 0.0 },
        reciprocal_rank: found_at.first().map(|&r| 1.0 / r as f64).unwrap_or(0.0),
        found_at,
        missed,
        latency_ms,
    }
}

/// Means of the per-query figures, and latency percentiles.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// Number of queries.
    pub queries: usize,
    /// Mean Recall@5.
    pub recall_at_5: f64,
    /// Mean Recall@10.
    pub recall_at_10: f64,
    /// Mean Recall@20.
    pub recall_at_20: f64,
    /// Mean nDCG@10.
    pub ndcg_at_10: f64,
    /// Mean reciprocal rank.
    pub mrr: f64,
    /// Median latency, ms.
    pub latency_p50_ms: f64,
    /// 95th percentile latency (nearest rank), ms.
    pub latency_p95_ms: f64,
}

/// Summarises a set of results.
pub fn summarize(results: &[&QueryResult]) -> Summary {
    let n = results.len().max(1) as f64;
    let mean = |f: fn(&QueryResult) -> f64| results.iter().map(|r| f(r)).sum::<f64>() / n;
    let mut latencies: Vec<f64> = results.iter().map(|r| r.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    Summary {
        queries: results.len(),
        recall_at_5: mean(|r| r.recall_at_5),
        recall_at_10: mean(|r| r.recall_at_10),
        recall_at_20: mean(|r| r.recall_at_20),
        ndcg_at_10: mean(|r| r.ndcg_at_10),
        mrr: mean(|r| r.reciprocal_rank),
        latency_p50_ms: percentile(&latencies, 0.50),
        latency_p95_ms: percentile(&latencies, 0.95),
    }
}

/// Nearest-rank percentile of sorted values (0 for none).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// The whole report: overall, by query type, and each query.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// All queries.
    pub overall: Summary,
    /// One summary per query type (empty when the file gives no types).
    pub by_type: BTreeMap<String, Summary>,
    /// Every query's figures.
    pub queries: Vec<QueryResult>,
}

/// Builds the report from per-query results.
pub fn report(results: Vec<QueryResult>) -> Report {
    let all: Vec<&QueryResult> = results.iter().collect();
    let mut groups: BTreeMap<String, Vec<&QueryResult>> = BTreeMap::new();
    for r in &results {
        if let Some(kind) = &r.kind {
            groups.entry(kind.clone()).or_default().push(r);
        }
    }
    Report {
        overall: summarize(&all),
        by_type: groups.into_iter().map(|(k, v)| (k, summarize(&v))).collect(),
        queries: results.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(relevant: &[&str]) -> LabelledQuery {
        LabelledQuery {
            qid: "q".into(),
            query: "x".into(),
            kind: None,
            relevant: relevant.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn metrics_of_a_known_ranking() {
        let r = score_query(&q(&["a", "b"]), &ids(&["x", "a", "y", "z", "w", "v", "b"]), 1.0);
        assert_eq!(r.found_at, [2, 7]);
        assert_eq!((r.recall_at_5, r.recall_at_10), (0.5, 1.0));
        assert_eq!(r.reciprocal_rank, 0.5);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 8f64.log2();
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((r.ndcg_at_10 - dcg / ideal).abs() < 1e-12);
        let perfect = score_query(&q(&["a"]), &ids(&["a"]), 1.0);
        assert_eq!((perfect.ndcg_at_10, perfect.reciprocal_rank), (1.0, 1.0));
        let none = score_query(&q(&["a"]), &ids(&["b"]), 1.0);
        assert_eq!((none.recall_at_20, none.ndcg_at_10, none.reciprocal_rank), (0.0, 0.0, 0.0));
        assert_eq!(none.missed, ["a"]);
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 10.0);
        assert_eq!(percentile(&v, 0.95), 19.0);
        assert_eq!(percentile(&[3.0], 0.95), 3.0);
    }

    #[test]
    fn query_files_are_checked() {
        let ok = "{\"qid\":\"a\",\"query\":\"x\",\"relevant\":[\"m1\"]}\n\n";
        assert_eq!(parse_queries(ok).unwrap().len(), 1);
        let e = parse_queries("{\"qid\":\"a\",\"query\":\"x\",\"relevant\":[]}").unwrap_err();
        assert!(e.to_string().contains("no relevant ids"), "{e}");
        let e = parse_queries(&format!("{ok}{ok}")).unwrap_err();
        assert!(e.to_string().contains("line 3: query id a is used twice"), "{e}");
        let e = parse_queries("not json").unwrap_err();
        assert!(e.to_string().starts_with("line 1:"), "{e}");
    }
}
