//! Unit tests of the score: the formula's bounds and orderings, as properties.

use proptest::prelude::*;

use super::*;

fn ranking() -> impl Strategy<Value = Ranking> {
    (0.0..0.99f64, 0.0..0.99f64, 0.01..10_000.0f64).prop_map(|(wr, wi, hl)| Ranking {
        recency_weight: wr,
        importance_weight: wi,
        recency_half_life_days: hl,
        ..Ranking::default()
    })
}

/// The factor list is what every reader reads: the JSON keys, the formula of `--explain`.
#[test]
fn the_factor_list_is_the_one_every_reader_reads() {
    let c = Components {
        relevance: 0.8,
        coverage: 0.5,
        episode: 0.1,
        recency: 0.25,
        importance: 1.0,
        date: 1.0,
        time: 1.0,
        name: 1.0,
        code: 1.0,
        work: 1.0,
    };
    let json = serde_json::to_value(c).unwrap();
    let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, component_names());
    assert_eq!(json["recency"], 0.25);
    let ranking = Ranking::default();
    let text = explain(&Relevance::Bm25 { best: 2.0 }, &ranking, &[], 0.3);
    for f in &FACTORS {
        assert!(text.contains(&format!("× {})", f.name)), "{text}");
        assert!(text.contains(&(f.definition)(&ranking)), "{text}");
    }
    let product = FACTORS
        .iter()
        .map(|f| factor((f.weight)(&ranking), (f.value)(&c)))
        .fold(c.relevance, |a, b| a * b);
    assert_eq!(combine(&c, &ranking), product);
}

#[test]
fn rrf_rewards_being_on_both_lists() {
    let both = FusionInput { bm25_rank: Some(3), vector_rank: Some(3), ..Default::default() };
    let first_bm25 = FusionInput { bm25_rank: Some(1), ..Default::default() };
    let first_vector = FusionInput { vector_rank: Some(1), ..Default::default() };
    let f = |c: &FusionInput| fuse(c, Fusion::Rrf, 60.0, 0.5);
    assert!(f(&both) > f(&first_bm25));
    assert_eq!(f(&first_bm25), f(&first_vector));
    assert_eq!(f(&FusionInput::default()), 0.0);
}

#[test]
fn convex_mixes_normalised_scores() {
    let c = FusionInput {
        bm25: 5.0,
        max_bm25: 10.0,
        cosine: Some(0.4),
        max_cosine: 0.8,
        ..Default::default()
    };
    assert!((fuse(&c, Fusion::Convex, 60.0, 0.5) - 0.5).abs() < 1e-9);
    assert!((fuse(&c, Fusion::Convex, 60.0, 0.0) - 0.5).abs() < 1e-9);
    let negative = FusionInput { cosine: Some(-0.2), max_cosine: 0.8, ..Default::default() };
    assert_eq!(fuse(&negative, Fusion::Convex, 60.0, 1.0), 0.0);
}

#[test]
fn explain_names_the_measure_and_the_weights() {
    let r = Ranking::default();
    let fused = |fusion| Relevance::Fused {
        fusion,
        rrf_k: 60.0,
        vector_weight: 0.6,
        candidates: 100,
        best: 0.5,
    };
    let convex = explain(&fused(Fusion::Convex), &r, &[], 0.3);
    assert!(
        convex.contains(
            "relevance = fused / 0.500; fused = 0.4 × bm25 / max bm25 + 0.6 × cosine / max cosine"
        ),
        "{convex}"
    );
    let rrf = explain(&fused(Fusion::Rrf), &r, &[], 0.3);
    assert!(
        rrf.contains("fused = 1/(60 + bm25 rank) + 1/(60 + cosine rank) over the 100 best"),
        "{rrf}"
    );
    let vector = explain(&Relevance::Vector { best: 0.8 }, &r, &["db".into()], 0.3);
    assert!(vector.contains("relevance = cosine / 0.800 (best cosine)"), "{vector}");
    assert!(vector.ends_with("synonyms searched at weight 0.3: db\n"), "{vector}");
    assert!(vector.starts_with("\nscore = relevance × (1 − "), "{vector}");
}

#[test]
fn half_life_halves() {
    let r = Ranking::default();
    let half = recency(r.recency_half_life_days, &r);
    assert!((half - 0.5).abs() < 1e-12, "{half}");
    assert_eq!(recency(0.0, &r), 1.0);
    assert_eq!(age_days(100, 200), 0.0, "future timestamps count as age zero");
}

proptest! {
    /// A newer memory never has lower recency.
    #[test]
    fn newer_is_never_less_recent(r in ranking(), now in 0i64..4_000_000_000, a in 0i64..4_000_000_000, b in 0i64..4_000_000_000) {
        let (older, newer) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(recency(age_days(now, newer), &r) >= recency(age_days(now, older), &r));
    }

    /// A higher importance never lowers the score.
    #[test]
    fn importance_never_lowers_the_score(r in ranking(), rel in 0.0..=1.0f64, rec in 0.0..=1.0f64, i in 1u8..=10, j in 1u8..=10) {
        let (lo, hi) = if i <= j { (i, j) } else { (j, i) };
        let s = |imp| combine(&Components { relevance: rel, coverage: 1.0, episode: 0.0, recency: rec, importance: importance(imp), date: 1.0, time: 1.0, name: 1.0, code: 1.0, work: 1.0 }, &r);
        prop_assert!(s(hi) >= s(lo));
    }

    /// A stronger memory never decays faster.
    #[test]
    fn stronger_never_decays_faster(age in 0.0..100_000.0f64, s1 in 0.001..100_000.0f64, s2 in 0.001..100_000.0f64) {
        let (weak, strong) = if s1 <= s2 { (s1, s2) } else { (s2, s1) };
        prop_assert!(retention(age, strong) >= retention(age, weak));
    }

    /// A memory that does not match never outranks one that does, however new or important.
    #[test]
    fn recency_never_swamps_relevance(r in ranking(), rel in 1e-6..=1.0f64, rec in 0.0..=1.0f64, imp in 1u8..=10) {
        let matching = combine(&Components { relevance: rel, coverage: 1.0, episode: 0.0, recency: 0.0, importance: importance(1), date: 1.0, time: 1.0, name: 1.0, code: 1.0, work: 1.0 }, &r);
        let unrelated = combine(&Components { relevance: 0.0, coverage: 0.0, episode: 0.0, recency: rec, importance: importance(imp), date: 1.0, time: 1.0, name: 1.0, code: 1.0, work: 1.0 }, &r);
        prop_assert!(matching > unrelated);
    }
}

/// Issue #39, item 2: the digest of a session that only asked never ranks above a fact that
/// holds a word of the question, whatever its relevance; it keeps its place below the facts
/// and above the rest, and nothing else moves.
#[test]
fn a_session_that_only_asked_ranks_below_the_weakest_matching_fact() {
    let r = Ranking::default();
    let of = |relevance: f64, coverage: f64| Components {
        relevance,
        coverage,
        episode: 0.0,
        recency: 1.0,
        importance: 0.5,
        date: 1.0,
        time: 1.0,
        name: 1.0,
        code: 1.0,
        work: 1.0,
    };
    let mut c = [of(1.0, 1.0), of(0.9, 0.4), of(0.3, 0.2), of(0.95, 0.0), of(0.2, 0.1)];
    let roles = [Role::QuestionOnly, Role::Digest, Role::Fact, Role::Fact, Role::QuestionOnly];
    let before: Vec<f64> = c.iter().map(|c| combine(c, &r)).collect();
    let mut scored: Vec<(f64, Role, &mut Components)> =
        c.iter_mut().zip(roles).map(|(c, role)| (combine(c, &r), role, c)).collect();
    questions_below_facts(&mut scored, &r);
    let after: Vec<f64> = scored.iter().map(|s| s.0).collect();
    // The floor is the fact that holds a word of the question (index 2), not the one that
    // holds none (index 3).
    assert!(after[0] < before[2] && after[0] > 0.99 * before[2], "{after:?}");
    assert!((scored[0].2.work - 0.999 * before[2] / before[0]).abs() < 1e-12);
    assert!((combine(scored[0].2, &r) - after[0]).abs() < 1e-12, "the factor explains it");
    assert_eq!(&after[1..], &before[1..], "a digest that did work, facts and a weak one stay");
}
