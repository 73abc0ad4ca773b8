//! Hybrid ranking, pure: reciprocal rank fusion of the keyword and vector legs, and the
//! position-aware blend of the fused order with a cross-encoder's scores.
//!
//! No I/O and no knowledge of SQL or models: inputs are ranked lists of keys and scores, outputs
//! are ranked lists, so the ranking rules are tested as plain functions.

use std::collections::HashMap;
use std::hash::Hash;

/// The RRF constant: how quickly lower ranks lose weight (60 is the value from Cormack et al.
/// that most hybrid search systems use).
pub const RRF_K: f64 = 60.0;

/// How many fused candidates a cross-encoder rescores; below them the fused order stands.
pub const RERANK_DEPTH: usize = 30;

/// Fuses ranked lists (best first): each key scores the sum of `1 / (RRF_K + rank)` over the
/// lists it appears in (rank from 1). Ties keep the order of first appearance, earlier lists
/// first, so the result is deterministic.
pub fn reciprocal_rank_fusion<K: Clone + Eq + Hash>(legs: &[Vec<K>]) -> Vec<(K, f64)> {
    let mut scores: HashMap<K, (f64, usize)> = HashMap::new();
    let mut order = 0usize;
    for leg in legs {
        for (at, key) in leg.iter().enumerate() {
            let entry = scores.entry(key.clone()).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += 1.0 / (RRF_K + (at + 1) as f64);
        }
    }
    let mut fused: Vec<(K, f64, usize)> = scores
        .into_iter()
        .map(|(key, (score, first))| (key, score, first))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused
        .into_iter()
        .map(|(key, score, _)| (key, score))
        .collect()
}

/// How much the fused order counts against the reranker at a fused position (0-based): the top
/// of a fusion is usually right, so there the reranker only breaks near-ties; further down it
/// decides more.
pub fn fusion_weight(position: usize) -> f64 {
    match position {
        0..=2 => 0.75,
        3..=9 => 0.60,
        _ => 0.40,
    }
}

/// Re-orders the first `reranker_scores.len()` entries of `fused` (best first) by
/// `w * fused_norm + (1 - w) * rerank_norm`, with `w = fusion_weight(position)` and both scores
/// min-max normalised over those entries; the rest keep their place. Scores returned are the
/// blended ones for the rescored entries and unchanged below them.
pub fn blend<K: Clone>(fused: &[(K, f64)], reranker_scores: &[f32]) -> Vec<(K, f64)> {
    let depth = reranker_scores.len().min(fused.len());
    if depth == 0 {
        return fused.to_vec();
    }
    let normalise = |values: Vec<f64>| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        values
            .into_iter()
            .map(|v| {
                if high > low {
                    (v - low) / (high - low)
                } else {
                    1.0
                }
            })
            .collect::<Vec<f64>>()
    };
    let fused_norm = normalise(fused[..depth].iter().map(|(_, s)| *s).collect());
    let rerank_norm = normalise(
        reranker_scores[..depth]
            .iter()
            .map(|&s| if s.is_finite() { f64::from(s) } else { 0.0 })
            .collect(),
    );
    let mut head: Vec<(usize, K, f64)> = (0..depth)
        .map(|at| {
            let weight = fusion_weight(at);
            (
                at,
                fused[at].0.clone(),
                weight * fused_norm[at] + (1.0 - weight) * rerank_norm[at],
            )
        })
        .collect();
    head.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    // Blended scores live in [0, 1]; entries below the rescored head keep their order after it.
    let mut out: Vec<(K, f64)> = head.into_iter().map(|(_, k, s)| (k, s)).collect();
    out.extend(fused[depth..].iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_rewards_agreement() {
        let keyword = vec!["a", "b", "c"];
        let vector = vec!["c", "d", "a"];
        let fused = reciprocal_rank_fusion(&[keyword, vector]);
        let keys: Vec<&str> = fused.iter().map(|(k, _)| *k).collect();
        // a: 1/61 + 1/63, c: 1/63 + 1/61 (tie, a first seen), then b (1/62) and d (1/62).
        assert_eq!(keys, ["a", "c", "b", "d"]);
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
    }

    #[test]
    fn one_leg_keeps_its_order() {
        let fused = reciprocal_rank_fusion(&[vec![3, 1, 2], vec![]]);
        assert_eq!(fused.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [3, 1, 2]);
    }

    #[test]
    fn blending_lets_the_reranker_reorder_more_further_down() {
        let fused: Vec<(&str, f64)> = (0..12)
            .map(|i| {
                (
                    ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"][i],
                    1.0 / (61.0 + i as f64),
                )
            })
            .collect();
        // The reranker prefers the last entries.
        let scores: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let blended = blend(&fused, &scores);
        let keys: Vec<&str> = blended.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys.len(), 12);
        // The fused winner stays on top at weight 0.75 ...
        assert_eq!(keys[0], "a");
        // ... while the reranker's favourite climbs above the middle of the list.
        let at = keys.iter().position(|k| *k == "l").expect("present");
        assert!(at < 11, "{keys:?}");
    }

    #[test]
    fn blending_only_touches_the_rescored_head() {
        let fused = vec![("a", 0.3), ("b", 0.2), ("c", 0.1)];
        let blended = blend(&fused, &[0.0, 5.0]);
        assert_eq!(blended[2], ("c", 0.1));
        assert_eq!(blend(&fused, &[]), fused);
        // Non-finite scores never panic or poison the order.
        assert_eq!(blend(&fused, &[f32::NAN, f32::INFINITY, 1.0]).len(), 3);
    }
}
