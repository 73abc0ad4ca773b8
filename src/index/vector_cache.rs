//! An int8 copy of every stored vector, in memory, for the unfiltered nearest-chunk search.
//!
//! sqlite-vec's KNN is an exact scan in scalar C over the float vectors: on the 10k synthetic
//! vault (47,304 chunks, 72 MB of vectors) a search took about 65 ms. The copy holds each vector
//! as 384 signed bytes scaled to its largest component (a quarter of the floats' memory), and a
//! scan is integer dot products the compiler vectorises. The ranking error is far below the
//! differences between neighbours (an int8 cosine is off by about 0.0005).
//!
//! The copy follows the table without trusting any one process: every search compares the
//! table's `vector_epoch` (bumped whenever vectors are deleted or the model changes) and its
//! highest id. Without deletions ids only grow, so new vectors are exactly those above the last
//! id seen and are appended; after a deletion the copy is reloaded.

use rusqlite::{Connection, OptionalExtension};

use super::schema::VECTOR_TABLE;

/// `meta` key counting deletions from the vector table (and model changes).
const EPOCH_KEY: &str = "vector_epoch";

/// Marks that vectors were deleted (inside the deleting transaction), so every copy reloads.
pub fn bump_epoch(connection: &Connection) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT INTO meta(key, value) VALUES(?1, '1')
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        [EPOCH_KEY],
    )?;
    Ok(())
}

#[derive(Debug, Default)]
pub(super) struct VectorCache {
    epoch: Option<i64>,
    max_id: i64,
    dims: usize,
    ids: Vec<i64>,
    /// Per vector: 1 / (norm × scale), so an integer dot product becomes a cosine.
    factors: Vec<f32>,
    codes: Vec<i8>,
}

impl VectorCache {
    /// Brings the copy in line with the table.
    pub fn refresh(&mut self, connection: &Connection) -> rusqlite::Result<()> {
        let epoch: i64 = connection
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                [EPOCH_KEY],
                |row| row.get::<_, String>(0),
            )
            .optional()?
            .and_then(|value| value.parse().ok())
            .unwrap_or(0);
        let max_id: i64 =
            connection.query_row("SELECT coalesce(max(id), 0) FROM embeddings", [], |row| {
                row.get(0)
            })?;
        if self.epoch != Some(epoch) {
            *self = VectorCache {
                epoch: Some(epoch),
                ..VectorCache::default()
            };
            let mut statement =
                connection.prepare(&format!("SELECT rowid, embedding FROM {VECTOR_TABLE}"))?;
            let mut rows = statement.query([])?;
            while let Some(row) = rows.next()? {
                self.push(row.get(0)?, &row.get::<_, Vec<u8>>(1)?);
            }
        } else if max_id > self.max_id {
            let mut ids =
                connection.prepare("SELECT id FROM embeddings WHERE id > ?1 ORDER BY id")?;
            let new: Vec<i64> = ids
                .query_map([self.max_id], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            let mut vector = connection.prepare_cached(&format!(
                "SELECT embedding FROM {VECTOR_TABLE} WHERE rowid = ?1"
            ))?;
            for id in new {
                // An id whose vector is not committed yet is picked up by the next search.
                if let Some(blob) = vector
                    .query_row([id], |row| row.get::<_, Vec<u8>>(0))
                    .optional()?
                {
                    self.push(id, &blob);
                }
            }
        }
        self.max_id = self.max_id.max(max_id);
        Ok(())
    }

    fn push(&mut self, id: i64, blob: &[u8]) {
        let vector: Vec<f32> = blob
            .chunks_exact(4)
            .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
            .collect();
        if self.ids.is_empty() {
            self.dims = vector.len();
        }
        if vector.len() != self.dims || self.dims == 0 {
            return;
        }
        let (codes, factor) = quantize(&vector);
        self.ids.push(id);
        self.factors.push(factor);
        self.codes.extend_from_slice(&codes);
        self.max_id = self.max_id.max(id);
    }

    /// The `k` ids nearest to `query` by cosine distance (0 = same direction), nearest first.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(i64, f64)> {
        if query.len() != self.dims || self.ids.is_empty() || k == 0 {
            return Vec::new();
        }
        let (query_codes, query_factor) = quantize(query);
        let mut scored: Vec<(f32, usize)> = self
            .codes
            .chunks_exact(self.dims)
            .zip(&self.factors)
            .enumerate()
            .map(|(at, (codes, factor))| (dot(&query_codes, codes) as f32 * factor, at))
            .collect();
        let k = k.min(scored.len());
        // Highest similarity first; only the first k need ordering.
        scored.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(k);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .map(|(similarity, at)| {
                let cosine = f64::from(similarity * query_factor).clamp(-1.0, 1.0);
                (self.ids[at], 1.0 - cosine)
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

/// The vector as bytes scaled so its largest component is ±127, and the factor that turns the
/// integer dot product with another such vector back into a cosine (with the other's factor).
fn quantize(vector: &[f32]) -> (Vec<i8>, f32) {
    let largest = vector
        .iter()
        .fold(0.0_f32, |max, value| max.max(value.abs()));
    let norm = vector.iter().map(|value| value * value).sum::<f32>().sqrt();
    if largest == 0.0 || !largest.is_finite() || !norm.is_finite() {
        return (vec![0; vector.len()], 0.0);
    }
    let scale = 127.0 / largest;
    let codes = vector
        .iter()
        .map(|value| (value * scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (codes, 1.0 / (scale * norm))
}

fn dot(a: &[i8], b: &[i8]) -> i32 {
    // Written so the compiler turns it into widening multiply-adds.
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_cosine(a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (norm(a) * norm(b))
    }

    #[test]
    fn int8_cosines_rank_like_exact_ones() {
        // Deterministic pseudo-random vectors (a linear congruential generator).
        let mut state = 12_345_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let vectors: Vec<Vec<f32>> = (0..300)
            .map(|_| (0..384).map(|_| next()).collect())
            .collect();
        let mut cache = VectorCache::default();
        for (id, vector) in vectors.iter().enumerate() {
            let blob: Vec<u8> = vector.iter().flat_map(|v| v.to_le_bytes()).collect();
            cache.push(id as i64 + 1, &blob);
        }
        // A query near vector 42.
        let query: Vec<f32> = vectors[41]
            .iter()
            .map(|value| value + next() * 0.3)
            .collect();
        let found = cache.nearest(&query, 10);
        let mut exact: Vec<(f32, i64)> = vectors
            .iter()
            .enumerate()
            .map(|(at, v)| (exact_cosine(&query, v), at as i64 + 1))
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        assert_eq!(found[0].0, 42);
        assert_eq!(found[0].0, exact[0].1);
        for (id, distance) in &found {
            let truth = 1.0 - exact_cosine(&query, &vectors[(*id - 1) as usize]);
            assert!(
                (distance - f64::from(truth)).abs() < 0.01,
                "{distance} vs {truth}"
            );
        }
        let found_ids: Vec<i64> = found.iter().map(|(id, _)| *id).collect();
        let exact_ids: Vec<i64> = exact.iter().take(10).map(|(_, id)| *id).collect();
        let overlap = found_ids.iter().filter(|id| exact_ids.contains(id)).count();
        assert!(overlap >= 9, "{found_ids:?} vs {exact_ids:?}");
    }

    #[test]
    fn zero_and_mismatched_vectors_are_harmless() {
        let mut cache = VectorCache::default();
        cache.push(1, &[0u8; 16]);
        cache.push(2, &[0u8; 8]);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.nearest(&[1.0, 0.0, 0.0], 5), Vec::new());
        let found = cache.nearest(&[1.0, 0.0, 0.0, 0.0], 5);
        assert_eq!(found.len(), 1);
        assert!(found[0].1.is_finite());
    }
}
