//! Query expansion: words of a query are joined by their synonyms from a small built-in
//! vocabulary of software work (plus the groups of `[query] synonyms` in `mem.toml`), so that
//! "which package manager" reaches a memory that only says "pnpm". Expansions count
//! `expansion_weight` of a direct match; they never replace the words the user typed.

use std::collections::BTreeSet;

use tantivy::tokenizer::TextAnalyzer;

/// The built-in groups: each line is a set of words or phrases that name the same thing.
const BUILT_IN: &[&[&str]] = &[
    &["package manager", "npm", "pnpm", "yarn", "pip", "poetry", "uv", "cargo", "bundler"],
    &["log in", "login", "sign in", "signin", "authentication", "authenticate"],
    &["log out", "logout", "sign out", "logged out", "session expired"],
    &["deploy", "deployment", "release", "rollout", "ship"],
    &["rollback", "roll back", "revert", "undo"],
    &["database", "db", "postgres", "postgresql", "mysql", "sqlite"],
    &["migration", "schema change", "alembic"],
    &["continuous integration", "ci", "pipeline", "github actions", "workflow"],
    &["end-to-end test", "e2e", "playwright", "integration test"],
    &["flaky", "flake", "intermittent", "nondeterministic"],
    &["bug", "defect", "regression", "incident", "outage"],
    &["post-mortem", "postmortem", "incident review", "root cause"],
    &["secret", "credential", "api key", "token", "password"],
    &["cache", "redis", "memcached"],
    &["container", "docker", "image"],
    &["kubernetes", "k8s", "kubectl", "pod", "cluster"],
    &["configuration", "config", "settings"],
    &["documentation", "docs", "readme"],
    &["pull request", "pr", "merge request", "code review"],
    &["dependency", "dependencies", "library", "package"],
    &["slow", "latency", "performance", "perf"],
    &["checklist", "procedure", "runbook", "steps"],
    &["preference", "convention", "style", "rule"],
];

/// Synonym groups, each as the analysed token sequences of its words and phrases.
#[derive(Clone, Debug, Default)]
pub struct Thesaurus {
    groups: Vec<Vec<Vec<String>>>,
}

impl Thesaurus {
    /// The built-in groups followed by `extra` ones, analysed with `analyzer`.
    pub fn new(extra: &[Vec<String>], analyzer: &mut TextAnalyzer) -> Thesaurus {
        let built_in = BUILT_IN.iter().map(|g| g.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let groups = built_in
            .chain(extra.iter().cloned())
            .map(|group| {
                group
                    .iter()
                    .map(|phrase| crate::tokenizer::tokens_of(analyzer, phrase))
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|g| g.len() > 1)
            .collect();
        Thesaurus { groups }
    }

    /// Tokens to add for a query whose analysed tokens are `query`: every token of every
    /// group one of whose phrases appears in the query, except the query's own tokens.
    pub fn expand(&self, query: &[String]) -> BTreeSet<String> {
        let own: BTreeSet<&String> = query.iter().collect();
        let mut out = BTreeSet::new();
        for group in &self.groups {
            if group.iter().any(|phrase| contains(query, phrase)) {
                for token in group.iter().flatten() {
                    if !own.contains(token) {
                        out.insert(token.clone());
                    }
                }
            }
        }
        out
    }
}

/// Whether `phrase` occurs as a contiguous run in `query`.
fn contains(query: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && query.windows(phrase.len()).any(|w| w == phrase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{analyzer, tokens_of as tokens};

    #[test]
    fn phrases_expand_to_their_group() {
        let mut a = analyzer();
        let t = Thesaurus::new(&[vec!["staging".into(), "preprod".into()]], &mut a);
        let q = tokens(&mut a, "which package manager");
        let added = t.expand(&q);
        assert!(added.contains("pnpm") && added.contains("npm"), "{added:?}");
        assert!(!added.contains("packag"), "the query's own words are not added again");
        let q = tokens(&mut a, "deploy to staging");
        let added = t.expand(&q);
        assert!(added.contains("preprod"), "user groups apply: {added:?}");
        let apart = t.expand(&tokens(&mut a, "manager of the package"));
        assert!(!apart.contains("pnpm"), "phrases must be contiguous: {apart:?}");
    }
}
