//! Similarity of memories' text, for admission control on `mem add` and for `mem reflect`:
//! TF-IDF vectors and their cosine, neighbours above a threshold, clusters of related
//! observations and a cluster's extractive digest (the reflections of Generative Agents,
//! arXiv 2304.03442: observations → reflections).
//!
//! Text becomes TF-IDF vectors over the index's analyzer (stems, code identifiers and their
//! parts, no stop words); similarity is cosine. Clusters grow greedily around the memory with
//! the most neighbours above the threshold, so no chain of pairwise links can merge two topics.
//! Pure functions: no files, no clock. See `docs/reflection.md`.

use std::collections::HashMap;

use rayon::prelude::*;
use serde::Serialize;

use crate::format::{Memory, MemoryType};
use crate::tokenizer;

/// A sparse vector: (term, weight) pairs sorted by term, L2-normalised.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseVec(pub Vec<(u32, f32)>);

impl SparseVec {
    /// Cosine similarity of two normalised vectors.
    pub fn dot(&self, other: &SparseVec) -> f32 {
        let (mut i, mut j, mut sum) = (0, 0, 0.0);
        let (a, b) = (&self.0, &other.0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    sum += a[i].1 * b[j].1;
                    i += 1;
                    j += 1;
                }
            }
        }
        sum
    }

    fn normalised(mut self) -> SparseVec {
        let norm = self.0.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        if norm > 0.0 {
            for (_, w) in &mut self.0 {
                *w /= norm;
            }
        }
        self
    }

    /// The normalised mean of `vectors`.
    pub fn centroid<'a>(vectors: impl IntoIterator<Item = &'a SparseVec>) -> SparseVec {
        let mut sum: HashMap<u32, f32> = HashMap::new();
        for v in vectors {
            for &(t, w) in &v.0 {
                *sum.entry(t).or_default() += w;
            }
        }
        let mut pairs: Vec<(u32, f32)> = sum.into_iter().collect();
        pairs.sort_by_key(|&(t, _)| t);
        SparseVec(pairs).normalised()
    }
}

/// Unit-length vectors that clustering compares by dot product (their cosine).
pub trait Similarity: Sync {
    /// Cosine similarity with `other`.
    fn similarity(&self, other: &Self) -> f32;
    /// The normalised mean of `vectors`.
    fn mean<'a>(vectors: impl IntoIterator<Item = &'a Self>) -> Self
    where
        Self: 'a + Sized;
}

impl Similarity for SparseVec {
    fn similarity(&self, other: &Self) -> f32 {
        self.dot(other)
    }

    fn mean<'a>(vectors: impl IntoIterator<Item = &'a Self>) -> Self {
        SparseVec::centroid(vectors)
    }
}

/// A dense embedding, unit length.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseVec(pub Vec<f32>);

impl Similarity for DenseVec {
    fn similarity(&self, other: &Self) -> f32 {
        crate::embed::dot(&self.0, &other.0)
    }

    fn mean<'a>(vectors: impl IntoIterator<Item = &'a Self>) -> Self {
        let mut sum: Vec<f32> = Vec::new();
        for v in vectors {
            if sum.is_empty() {
                sum = vec![0.0; v.0.len()];
            }
            sum.iter_mut().zip(&v.0).for_each(|(s, x)| *s += x);
        }
        crate::embed::normalize(&mut sum);
        DenseVec(sum)
    }
}

/// For each dense vector, the others with cosine at least `threshold`, best first: every pair
/// is compared (`n² / 2` dot products, in parallel).
pub fn dense_neighbours(vectors: &[DenseVec], threshold: f32) -> Vec<Vec<(usize, f32)>> {
    vectors
        .par_iter()
        .enumerate()
        .map(|(i, v)| {
            let mut found: Vec<(usize, f32)> = vectors
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(j, w)| (j, v.similarity(w)))
                .filter(|&(_, sim)| sim >= threshold)
                .collect();
            found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            found
        })
        .collect()
}

/// A vocabulary with document frequencies, and the surface words each stem came from.
#[derive(Debug, Default)]
pub struct Space {
    terms: HashMap<String, u32>,
    idf: Vec<f32>,
    surface: Vec<HashMap<String, u32>>,
}

impl Space {
    /// Learns the vocabulary and IDF (`ln((N + 1) / (df + 1)) + 1`) of `texts`, and returns it
    /// with the texts' vectors (sublinear TF × IDF, normalised). Texts are analysed in parallel
    /// a batch at a time, and each batch is turned into term ids before the next: the words of
    /// all texts are never held at once (at 10,000 memories they took most of 370 MiB).
    pub fn fit(texts: &[String]) -> (Space, Vec<SparseVec>) {
        Space::fit_with(texts.len(), |i| std::borrow::Cow::Borrowed(texts[i].as_str()))
    }

    /// [`Space::fit`] of the `n` texts `text(0)` .. `text(n - 1)`, each made when its batch is
    /// analysed.
    pub fn fit_with<'a>(
        n: usize,
        text: impl Fn(usize) -> std::borrow::Cow<'a, str> + Sync,
    ) -> (Space, Vec<SparseVec>) {
        const BATCH: usize = 256;
        let mut space = Space::default();
        let mut df: Vec<u32> = Vec::new();
        let mut counts: Vec<Vec<(u32, u32)>> = Vec::with_capacity(n);
        for start in (0..n).step_by(BATCH) {
            let tokenised: Vec<Vec<(String, String)>> =
                (start..n.min(start + BATCH)).into_par_iter().map(|i| analyse(&text(i))).collect();
            for tokens in tokenised {
                let mut tf: HashMap<u32, u32> = HashMap::new();
                for (stem, surface) in tokens {
                    let next = space.terms.len() as u32;
                    let id = match space.terms.get(&stem) {
                        Some(&id) => id,
                        None => {
                            space.terms.insert(stem, next);
                            df.push(0);
                            space.surface.push(HashMap::new());
                            next
                        }
                    };
                    *space.surface[id as usize].entry(surface).or_default() += 1;
                    *tf.entry(id).or_default() += 1;
                }
                for &id in tf.keys() {
                    df[id as usize] += 1;
                }
                let mut tf: Vec<(u32, u32)> = tf.into_iter().collect();
                tf.sort_unstable();
                counts.push(tf);
            }
        }
        let n = n as f32;
        space.idf = df.iter().map(|&d| ((n + 1.0) / (d as f32 + 1.0)).ln() + 1.0).collect();
        let vectors = counts.par_iter().map(|tf| space.weigh_counts(tf)).collect();
        (space, vectors)
    }

    /// The vector of a new text in this space (words the space has not seen are ignored).
    pub fn vector(&self, text: &str) -> SparseVec {
        self.weigh(&analyse(text))
    }

    fn weigh(&self, tokens: &[(String, String)]) -> SparseVec {
        let mut tf: HashMap<u32, u32> = HashMap::new();
        for (stem, _) in tokens {
            if let Some(&id) = self.terms.get(stem) {
                *tf.entry(id).or_default() += 1;
            }
        }
        let mut tf: Vec<(u32, u32)> = tf.into_iter().collect();
        tf.sort_unstable();
        self.weigh_counts(&tf)
    }

    /// The vector of term counts `(term, count)`, sorted by term.
    fn weigh_counts(&self, tf: &[(u32, u32)]) -> SparseVec {
        let pairs: Vec<(u32, f32)> = tf
            .iter()
            .map(|&(id, n)| (id, (1.0 + (n as f32).ln()) * self.idf[id as usize]))
            .collect();
        SparseVec(pairs).normalised()
    }

    /// The most frequent surface form of a term.
    fn word(&self, term: u32) -> &str {
        self.surface[term as usize]
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(w, _)| w.as_str())
            .unwrap_or("")
    }
}

/// (stem, lower-cased surface word) pairs of a text, through the index's analyzer.
fn analyse(text: &str) -> Vec<(String, String)> {
    tokenizer::with_analyzer(|analyzer| {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = tantivy::tokenizer::TokenStream::next(&mut stream) {
            let surface = text.get(token.offset_from..token.offset_to).unwrap_or(&token.text);
            out.push((token.text.clone(), surface.to_lowercase()));
        }
        out
    })
}

/// In stores of at least this many memories, terms found in more than a tenth of them are
/// skipped when looking for neighbours: they weigh little (low IDF) and cost the most.
pub const COMMON_TERMS_FROM: usize = 1_000;

/// For each vector, the others whose cosine is at least `threshold`, found through an
/// inverted index of terms (in parallel). See [`COMMON_TERMS_FROM`].
pub fn neighbours(vectors: &[SparseVec], threshold: f32) -> Vec<Vec<(usize, f32)>> {
    let mut postings: HashMap<u32, Vec<(usize, f32)>> = HashMap::new();
    for (i, v) in vectors.iter().enumerate() {
        for &(t, w) in &v.0 {
            postings.entry(t).or_default().push((i, w));
        }
    }
    let n = vectors.len();
    if n >= COMMON_TERMS_FROM {
        postings.retain(|_, p| p.len() * 10 <= n);
    }
    let empty = Vec::new();
    vectors
        .par_iter()
        .enumerate()
        .map_init(
            || (vec![0f32; n], Vec::new()),
            |(scores, touched), (i, v)| {
                for &(t, w) in &v.0 {
                    for &(j, wj) in postings.get(&t).unwrap_or(&empty) {
                        if scores[j] == 0.0 {
                            touched.push(j);
                        }
                        scores[j] += w * wj;
                    }
                }
                let mut found = Vec::new();
                for &j in touched.iter() {
                    if j != i && scores[j] >= threshold {
                        found.push((j, scores[j]));
                    }
                    scores[j] = 0.0;
                }
                touched.clear();
                found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                found
            },
        )
        .collect()
}

/// Groups of at least `min_size` indices. Repeatedly, the unassigned item with the most
/// unassigned neighbours becomes a centre and takes those neighbours; then the group grows by
/// the neighbours of its members that are within `threshold` of its centroid, until it stops
/// changing. A member must resemble the group as a whole, so no chain of pairwise likenesses
/// can join two topics. Deterministic.
pub fn cluster<V: Similarity>(
    vectors: &[V],
    neighbours: &[Vec<(usize, f32)>],
    threshold: f32,
    min_size: usize,
) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..neighbours.len()).collect();
    order.sort_by(|&a, &b| neighbours[b].len().cmp(&neighbours[a].len()).then(a.cmp(&b)));
    let mut assigned = vec![false; neighbours.len()];
    let mut in_cluster = vec![false; neighbours.len()];
    let mut clusters = Vec::new();
    for centre in order {
        if assigned[centre] {
            continue;
        }
        let mut members: Vec<usize> = std::iter::once(centre)
            .chain(neighbours[centre].iter().map(|&(j, _)| j).filter(|&j| !assigned[j]))
            .collect();
        for &m in &members {
            in_cluster[m] = true;
        }
        // Grow: neighbours of members close to the centroid join, a few rounds at most.
        for _ in 0..8 {
            let centroid = V::mean(members.iter().map(|&m| &vectors[m]));
            let mut near: Vec<usize> = members
                .iter()
                .flat_map(|&m| neighbours[m].iter().map(|&(j, _)| j))
                .filter(|&j| !assigned[j] && !in_cluster[j])
                .collect();
            near.sort_unstable();
            near.dedup();
            near.retain(|&j| vectors[j].similarity(&centroid) >= threshold);
            if near.is_empty() {
                break;
            }
            for &j in &near {
                in_cluster[j] = true;
            }
            members.extend(near);
        }
        for &m in &members {
            in_cluster[m] = false;
        }
        if members.len() < min_size.max(2) {
            continue;
        }
        members.sort_unstable();
        for &m in &members {
            assigned[m] = true;
        }
        clusters.push(members);
    }
    clusters
}

/// What a reflection says: its title, type, importance, tags and extractive summary.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Digest {
    /// Title from the cluster's most distinctive words.
    pub title: String,
    /// `procedural` when most sources are steps, else `semantic`.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// The highest importance among the sources, plus one from five sources on, at most 10.
    pub importance: u8,
    /// Tags carried by at least half of the sources.
    pub tags: Vec<String>,
    /// The most central sentences, most central first, without near-repeats.
    pub sentences: Vec<String>,
}

/// Longest summary, in sentences.
pub const SUMMARY_SENTENCES: usize = 5;

/// Summarises `sources` (memories with their vectors in `space`).
pub fn digest(space: &Space, sources: &[(&Memory, &SparseVec)]) -> Digest {
    let centroid = SparseVec::centroid(sources.iter().map(|(_, v)| *v));
    // Title: the three heaviest terms of the centroid, as people wrote them.
    let mut heavy: Vec<&(u32, f32)> = centroid.0.iter().collect();
    heavy.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut words: Vec<&str> = Vec::new();
    for &&(term, _) in &heavy {
        let word = space.word(term);
        let redundant = words.iter().any(|w| w.contains(word) || word.contains(w));
        if !word.is_empty() && !word.chars().all(|c| c.is_ascii_digit()) && !redundant {
            words.push(word);
        }
        if words.len() == 3 {
            break;
        }
    }
    let title = match words.as_slice() {
        [] => format!("Reflection on {} observations", sources.len()),
        [one] => capitalise(one),
        [rest @ .., last] => format!("{} and {last}", capitalise(&rest.join(", "))),
    };

    // Sentences: every sentence of every source, scored by closeness to the centroid.
    let mut candidates: Vec<(f32, String, SparseVec)> = Vec::new();
    for (memory, _) in sources {
        for sentence in sentences(memory.body()) {
            let v = space.vector(&sentence);
            candidates.push((v.dot(&centroid), sentence, v));
        }
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut picked: Vec<(String, SparseVec)> = Vec::new();
    for (_, sentence, v) in candidates {
        if picked.len() == SUMMARY_SENTENCES {
            break;
        }
        if picked.iter().all(|(_, p)| p.dot(&v) < 0.7) {
            picked.push((sentence, v));
        }
    }

    let procedural = sources
        .iter()
        .filter(|(m, _)| m.kind() == MemoryType::Procedural || is_steps(m.body()))
        .count();
    let kind =
        if procedural * 2 > sources.len() { MemoryType::Procedural } else { MemoryType::Semantic };
    let top = sources.iter().map(|(m, _)| m.importance()).max().unwrap_or(5);
    let importance = (top + u8::from(sources.len() >= 5)).min(10);
    let mut tag_counts: Vec<(String, usize)> = Vec::new();
    for (m, _) in sources {
        for tag in m.tags() {
            match tag_counts.iter_mut().find(|(t, _)| t.eq_ignore_ascii_case(tag)) {
                Some((_, n)) => *n += 1,
                None => tag_counts.push((tag.clone(), 1)),
            }
        }
    }
    let tags =
        tag_counts.into_iter().filter(|(_, n)| n * 2 >= sources.len()).map(|(t, _)| t).collect();
    Digest {
        title,
        kind,
        importance,
        tags,
        sentences: picked.into_iter().map(|(s, _)| s).collect(),
    }
}

/// The sentences of a Markdown body: list items and prose split at `.`, `!`, `?`; headings,
/// code blocks and fragments under 20 characters are left out.
pub fn sentences(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in body.lines() {
        let line = line.trim();
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.starts_with('#') || line.is_empty() {
            continue;
        }
        let line = line
            .trim_start_matches(['-', '*', '>', ' '])
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches(['.', ')', ' ']);
        let mut start = 0;
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        for (k, &(i, c)) in chars.iter().enumerate() {
            let end_of_sentence = matches!(c, '.' | '!' | '?')
                && chars.get(k + 1).is_none_or(|&(_, next)| next.is_whitespace());
            if end_of_sentence {
                push_sentence(&mut out, &line[start..i + c.len_utf8()]);
                start = i + c.len_utf8();
            }
        }
        push_sentence(&mut out, &line[start..]);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, s: &str) {
    let s = s.trim();
    if s.chars().count() >= 20 {
        out.push(s.to_string());
    }
}

/// Whether most non-blank lines of a body are list items or numbered steps.
fn is_steps(body: &str) -> bool {
    let lines: Vec<&str> =
        body.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let steps = lines
        .iter()
        .filter(|l| {
            l.starts_with("- ")
                || l.starts_with("* ")
                || l.split_once(". ").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
        })
        .count();
    !lines.is_empty() && steps * 2 > lines.len()
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_texts_are_close_and_others_far() {
        let texts: Vec<String> = [
            "Redis evicted the session keys under maxmemory pressure",
            "Session keys vanish from Redis when maxmemory is reached: eviction",
            "The checkout Playwright test is flaky in CI",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (_, v) = Space::fit(&texts);
        assert!(v[0].dot(&v[1]) > 0.3, "{}", v[0].dot(&v[1]));
        assert!(v[0].dot(&v[2]) < 0.05);
        assert!((v[0].dot(&v[0]) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn clusters_need_a_centre_and_enough_members() {
        let texts: Vec<String> = [
            "redis eviction of session keys",
            "redis eviction under maxmemory",
            "session keys evicted by redis",
            "flaky playwright checkout test",
            "playwright checkout test flaky again",
            "team lunch on friday",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (_, v) = Space::fit(&texts);
        let graph = neighbours(&v, 0.2);
        assert_eq!(cluster(&v, &graph, 0.2, 3), [vec![0, 1, 2]]);
        assert_eq!(cluster(&v, &graph, 0.2, 2), [vec![0, 1, 2], vec![3, 4]]);
    }

    #[test]
    fn sentences_skip_code_and_headings() {
        let body = "# Title\n\nFirst sentence is long enough. Short.\n- a list item that is long enough\n```\ncode line that is long enough\n```\n";
        assert_eq!(
            sentences(body),
            ["First sentence is long enough.", "a list item that is long enough"]
        );
        assert!(is_steps("1. one\n2. two\n3. three\n"));
        assert!(!is_steps("prose here\nmore prose\n- one item\n"));
    }
}
