//! A deterministic stand-in for a real model, for tests that need vectors but not meaning:
//! feature hashing of lower-cased words and their character trigrams, so texts sharing words or
//! word parts ("plan", "planning") come out similar. It never loads anything.

use sha2::{Digest, Sha256};

use super::{EmbedError, Embedder, Reranker, TextKind};

#[derive(Debug, Clone)]
pub struct FakeEmbedder {
    dimensions: usize,
}

impl FakeEmbedder {
    pub fn new(dimensions: usize) -> FakeEmbedder {
        FakeEmbedder {
            dimensions: dimensions.max(1),
        }
    }

    fn vector(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0f32; self.dimensions];
        let lower = text.to_lowercase();
        for word in lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            add_feature(&mut vector, word, 1.0);
            let chars: Vec<char> = format!("^{word}$").chars().collect();
            for gram in chars.windows(3) {
                add_feature(&mut vector, &gram.iter().collect::<String>(), 0.5);
            }
        }
        super::normalize(&mut vector);
        vector
    }
}

fn add_feature(vector: &mut [f32], feature: &str, weight: f32) {
    let digest = Sha256::digest(feature.as_bytes());
    let bucket = u64::from_le_bytes([
        digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
    ]) as usize
        % vector.len();
    let sign = if digest[8] & 1 == 0 { 1.0 } else { -1.0 };
    vector[bucket] += sign * weight;
}

impl Embedder for FakeEmbedder {
    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&mut self, texts: &[String], _kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|text| self.vector(text)).collect())
    }
}

/// Scores a passage by how many of the query's words it contains; enough to test reranking.
#[derive(Debug, Clone, Copy, Default)]
pub struct FakeReranker;

impl Reranker for FakeReranker {
    fn score(&mut self, query: &str, passages: &[String]) -> Result<Vec<f32>, EmbedError> {
        let words: Vec<String> = query
            .to_lowercase()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        Ok(passages
            .iter()
            .map(|passage| {
                let passage = passage.to_lowercase();
                words
                    .iter()
                    .filter(|w| passage.contains(w.as_str()))
                    .count() as f32
            })
            .collect())
    }
}
