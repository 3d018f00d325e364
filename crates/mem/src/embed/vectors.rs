//! The vectors of a root's memories, in `.mem/vectors.bin`: one int8 vector per memory with
//! its scale, keyed by memory id and by the hash of the text it was computed from, under the
//! checksum of the model that computed it. Derived state: a missing, damaged or foreign file is
//! simply recomputed.
//!
//! ```text
//! file   = magic "MEMVEC01" | model checksum [32] | dim u32 | count u32 | record* | blake3 [32]
//! record = id length u16 | id | file hash [16] | text hash [16] | scale f32 | int8 × dim
//! ```
//! A value `v[i]` is stored as `round(v[i] / scale)` with `scale = max |v| / 127`; cosines
//! computed from the int8 values differ from the f32 ones by well under 0.01.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::store::{Overwrite, write_atomic};
use crate::{Error, Result};

/// File name under `.mem/`.
pub const FILE: &str = "vectors.bin";
const MAGIC: &[u8; 8] = b"MEMVEC01";

/// What is known about one memory's vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// Hash of the memory file's bytes (a cheap "unchanged" check).
    pub file: [u8; 16],
    /// Hash of the embedded text (a file can change without its text changing).
    pub text: [u8; 16],
}

/// Every memory's vector, in memory.
#[derive(Clone, Debug)]
pub struct VectorStore {
    model: [u8; 32],
    dim: usize,
    ids: Vec<String>,
    keys: Vec<Key>,
    scales: Vec<f32>,
    data: Vec<i8>,
    /// Position of each vector by [`crate::format::id_key`] of its id.
    by_key: FxHashMap<u64, usize>,
}

/// Why a vector file was not used as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discarded {
    /// It was computed by another model.
    OtherModel,
    /// It is damaged or of another format.
    Damaged(String),
}

impl VectorStore {
    /// An empty store for vectors of `dim` values from the model with this checksum.
    pub fn new(model: [u8; 32], dim: usize) -> VectorStore {
        VectorStore {
            model,
            dim,
            ids: Vec::new(),
            keys: Vec::new(),
            scales: Vec::new(),
            data: Vec::new(),
            by_key: FxHashMap::default(),
        }
    }

    /// Reads `path`; an absent file gives an empty store, and a file from another model or a
    /// damaged one gives an empty store and the reason.
    pub fn load(
        path: &Path,
        model: [u8; 32],
        dim: usize,
    ) -> Result<(VectorStore, Option<Discarded>)> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((VectorStore::new(model, dim), None));
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        match VectorStore::decode(&bytes) {
            Ok(store) if store.model == model && store.dim == dim => Ok((store, None)),
            Ok(_) => Ok((VectorStore::new(model, dim), Some(Discarded::OtherModel))),
            Err(why) => Ok((VectorStore::new(model, dim), Some(Discarded::Damaged(why)))),
        }
    }

    /// Writes the store to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        write_atomic(path, &self.encode(), Overwrite::Yes)
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.ids.len() * (self.dim + 64));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.model);
        out.extend_from_slice(&(self.dim as u32).to_le_bytes());
        out.extend_from_slice(&(self.ids.len() as u32).to_le_bytes());
        for (i, id) in self.ids.iter().enumerate() {
            out.extend_from_slice(&(id.len() as u16).to_le_bytes());
            out.extend_from_slice(id.as_bytes());
            out.extend_from_slice(&self.keys[i].file);
            out.extend_from_slice(&self.keys[i].text);
            out.extend_from_slice(&self.scales[i].to_le_bytes());
            out.extend(self.vector(i).iter().map(|&v| v as u8));
        }
        let sum = blake3::hash(&out);
        out.extend_from_slice(sum.as_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> std::result::Result<VectorStore, String> {
        if bytes.len() < 48 + 32 || &bytes[..8] != MAGIC {
            return Err("not a vector file of this version".into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        if blake3::hash(body).as_bytes() != sum {
            return Err("checksum mismatch".into());
        }
        let mut r = Reader { bytes: body, at: 8 };
        let model: [u8; 32] = r.array()?;
        let dim = u32::from_le_bytes(r.array()?) as usize;
        let count = u32::from_le_bytes(r.array()?) as usize;
        let mut store = VectorStore::new(model, dim);
        for _ in 0..count {
            let len = u16::from_le_bytes(r.array()?) as usize;
            let id = std::str::from_utf8(r.take(len)?).map_err(|e| e.to_string())?.to_string();
            let key = Key { file: r.array()?, text: r.array()? };
            let scale = f32::from_le_bytes(r.array()?);
            let values = r.take(dim)?.iter().map(|&b| b as i8);
            store.index(&id, store.ids.len());
            store.ids.push(id);
            store.keys.push(key);
            store.scales.push(scale);
            store.data.extend(values);
        }
        if r.at != body.len() {
            return Err("trailing bytes".into());
        }
        Ok(store)
    }

    fn index(&mut self, id: &str, position: usize) {
        self.by_key.insert(crate::format::id_key(id), position);
    }

    /// Where memory `id`'s vector is (its key, checked against the id itself).
    fn position(&self, id: &str) -> Option<usize> {
        let &i = self.by_key.get(&crate::format::id_key(id))?;
        (self.ids[i] == id).then_some(i)
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there is no vector.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Length of each vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The ids that have a vector, in storage order.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The key a memory's vector was computed under.
    pub fn key(&self, id: &str) -> Option<Key> {
        self.position(id).map(|i| self.keys[i])
    }

    /// Records that memory `id` now has file hash `file` with an unchanged text.
    pub fn rekey(&mut self, id: &str, file: [u8; 16]) {
        if let Some(i) = self.position(id) {
            self.keys[i].file = file;
        }
    }

    fn vector(&self, i: usize) -> &[i8] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Memory `id`'s vector, back in f32 (unit length up to rounding).
    pub fn get(&self, id: &str) -> Option<Vec<f32>> {
        let i = self.position(id)?;
        Some(self.vector(i).iter().map(|&v| f32::from(v) * self.scales[i]).collect())
    }

    /// Stores (or replaces) memory `id`'s vector `v` (of length `dim`).
    pub fn insert(&mut self, id: &str, key: Key, v: &[f32]) {
        debug_assert_eq!(v.len(), self.dim);
        let (scale, values) = quantize(v);
        match self.position(id) {
            Some(i) => {
                self.keys[i] = key;
                self.scales[i] = scale;
                self.data[i * self.dim..(i + 1) * self.dim].copy_from_slice(&values);
            }
            None => {
                self.index(id, self.ids.len());
                self.ids.push(id.to_string());
                self.keys.push(key);
                self.scales.push(scale);
                self.data.extend_from_slice(&values);
            }
        }
    }

    /// Drops every vector whose id `keep` refuses; returns how many went.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) -> usize {
        let before = self.ids.len();
        let mut kept = VectorStore::new(self.model, self.dim);
        for i in 0..before {
            if keep(&self.ids[i]) {
                kept.index(&self.ids[i], kept.ids.len());
                kept.ids.push(std::mem::take(&mut self.ids[i]));
                kept.keys.push(self.keys[i]);
                kept.scales.push(self.scales[i]);
                kept.data.extend_from_slice(&self.data[i * self.dim..(i + 1) * self.dim]);
            }
        }
        *self = kept;
        before - self.ids.len()
    }

    /// The cosine of `query` (unit length, `dim` values) with every stored vector, in storage
    /// order. An exact scan: about `len × dim` multiply-adds.
    pub fn cosines(&self, query: &[f32]) -> Vec<f32> {
        if query.len() != self.dim || self.dim == 0 {
            return vec![0.0; self.len()];
        }
        self.data
            .chunks_exact(self.dim)
            .zip(&self.scales)
            .map(|(v, &scale)| crate::embed::dot(query, v) * scale)
            .collect()
    }

    /// The `k` best (id, cosine) pairs for `query`, best first, ties by id.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(String, f32)> {
        let cosines = self.cosines(query);
        let mut order: Vec<usize> = (0..cosines.len()).collect();
        let by_cosine = |a: &usize, b: &usize| {
            cosines[*b].total_cmp(&cosines[*a]).then_with(|| self.ids[*a].cmp(&self.ids[*b]))
        };
        if k < order.len() {
            order.select_nth_unstable_by(k, by_cosine);
            order.truncate(k);
        }
        order.sort_by(by_cosine);
        order.into_iter().map(|i| (self.ids[i].clone(), cosines[i])).collect()
    }

    /// The cosine of `query` with the vector of the memory whose id has
    /// [`crate::format::id_key`] `key`.
    pub fn cosine_by_key(&self, query: &[f32], key: u64) -> Option<f32> {
        let &i = self.by_key.get(&key)?;
        (query.len() == self.dim).then(|| crate::embed::dot(query, self.vector(i)) * self.scales[i])
    }
}

/// Scale and int8 values of `v`.
fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return (0.0, vec![0; v.len()]);
    }
    let scale = max / 127.0;
    (scale, v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect())
}

/// The vector file of a state folder.
pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(FILE)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> std::result::Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or("truncated")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut v: Vec<f32> = (0..dim).map(|_| rng.f32() - 0.5).collect();
        crate::embed::normalize(&mut v);
        v
    }

    fn key(n: u8) -> Key {
        Key { file: [n; 16], text: [n; 16] }
    }

    #[test]
    fn int8_cosines_stay_close_to_f32() {
        let mut store = VectorStore::new([1; 32], 384);
        let vs: Vec<Vec<f32>> = (0..50).map(|s| unit(s, 384)).collect();
        for (i, v) in vs.iter().enumerate() {
            store.insert(&format!("m{i}"), key(i as u8), v);
        }
        let q = unit(999, 384);
        for (i, c) in store.cosines(&q).into_iter().enumerate() {
            let exact: f32 = q.iter().zip(&vs[i]).map(|(a, b)| a * b).sum();
            assert!((c - exact).abs() < 0.01, "{c} vs {exact}");
        }
        let best = store.nearest(&vs[7], 3);
        assert_eq!(best[0].0, "m7");
        assert!(best[0].1 > 0.99);
    }

    #[test]
    fn round_trips_and_refuses_damage_or_another_model() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE);
        let mut store = VectorStore::new([3; 32], 16);
        store.insert("a", key(1), &unit(1, 16));
        store.insert("b", key(2), &unit(2, 16));
        store.insert("a", key(3), &unit(3, 16));
        assert_eq!(store.len(), 2);
        store.save(&file).unwrap();

        let (back, why) = VectorStore::load(&file, [3; 32], 16).unwrap();
        assert_eq!(why, None);
        assert_eq!(back.ids(), ["a", "b"]);
        assert_eq!(back.key("a"), Some(key(3)));
        assert_eq!(back.get("b"), store.get("b"));

        let (other, why) = VectorStore::load(&file, [4; 32], 16).unwrap();
        assert_eq!((other.len(), why), (0, Some(Discarded::OtherModel)));

        let mut bytes = std::fs::read(&file).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        let (damaged, why) = VectorStore::load(&file, [3; 32], 16).unwrap();
        assert_eq!(damaged.len(), 0);
        assert!(matches!(why, Some(Discarded::Damaged(_))), "{why:?}");
    }

    #[test]
    fn retain_keeps_order_and_lookup() {
        let mut store = VectorStore::new([0; 32], 8);
        for (i, id) in ["a", "b", "c", "d"].iter().enumerate() {
            store.insert(id, key(i as u8), &unit(i as u64, 8));
        }
        let c = store.get("c");
        assert_eq!(store.retain(|id| id != "b"), 1);
        assert_eq!(store.ids(), ["a", "c", "d"]);
        assert_eq!(store.get("c"), c);
        assert_eq!(store.key("d"), Some(key(3)));
    }
}
