//! The one reader of the ranking columns: a document's fast fields turned into the
//! [`Signals`] that [`crate::score`] combines. Every ranking path (BM25, vector, hybrid) reads
//! them here; adding a signal means its column in `schema.rs`, its field here and in
//! [`Signals`], and its component in `score.rs`.

use std::sync::Arc;

use tantivy::columnar::ColumnValues;
use tantivy::{DocId, SegmentReader};

use crate::format::DEFAULT_IMPORTANCE;
use crate::score::{Epoch, Role, Signals};
use crate::usage::last_used::LastUsed;

/// The ranking columns of one segment, opened once.
pub(super) struct Columns {
    importance: Arc<dyn ColumnValues<u64>>,
    last_access: Arc<dyn ColumnValues<i64>>,
    created: Arc<dyn ColumnValues<i64>>,
    tiebreak: Arc<dyn ColumnValues<u64>>,
    id_key: Arc<dyn ColumnValues<u64>>,
    role: Arc<dyn ColumnValues<u64>>,
    has_time: Arc<dyn ColumnValues<u64>>,
    into_key: Arc<dyn ColumnValues<u64>>,
}

impl Columns {
    /// Opens the columns of `segment`; a document without a value gets the defaults
    /// (importance 5, last access `now`, tiebreak and key 0).
    pub(super) fn open(segment: &SegmentReader, now: Epoch) -> tantivy::Result<Columns> {
        let ff = segment.fast_fields();
        Ok(Columns {
            importance: ff.u64("importance")?.first_or_default_col(u64::from(DEFAULT_IMPORTANCE)),
            last_access: ff.i64("last_access")?.first_or_default_col(now),
            created: ff.i64("created")?.first_or_default_col(now),
            tiebreak: ff.u64("tiebreak")?.first_or_default_col(0),
            id_key: ff.u64("id_key")?.first_or_default_col(0),
            role: ff.u64("role")?.first_or_default_col(0),
            has_time: ff.u64("has_time")?.first_or_default_col(0),
            into_key: ff.u64("into_key")?.first_or_default_col(0),
        })
    }

    /// The ranking signals of `doc`; its last access is the later of the column's (creation,
    /// or the last use of an `access:` line still in the file) and its last use in `last_used`.
    pub(super) fn signals(&self, doc: DocId, last_used: &LastUsed) -> Signals {
        let column = self.last_access.get_val(doc);
        let used = last_used.get(self.id_key(doc)).unwrap_or(column);
        Signals {
            importance: self.importance.get_val(doc).min(u64::from(u8::MAX)) as u8,
            last_access: column.max(used),
            role: Role::of_code(self.role.get_val(doc)),
            created: self.created(doc),
            has_time: self.has_time.get_val(doc) == 1,
        }
    }

    /// [`crate::format::id_key`] of the reflection `doc` was consolidated into, if any.
    pub(super) fn reflection_key(&self, doc: DocId) -> Option<u64> {
        Some(self.into_key.get_val(doc)).filter(|&k| k != 0)
    }

    /// When `doc` was created, seconds since the epoch.
    pub(super) fn created(&self, doc: DocId) -> i64 {
        self.created.get_val(doc)
    }

    /// The stable hash of `doc`'s path that orders exact score ties.
    pub(super) fn tiebreak(&self, doc: DocId) -> u64 {
        self.tiebreak.get_val(doc)
    }

    /// [`crate::format::id_key`] of `doc`'s id.
    pub(super) fn id_key(&self, doc: DocId) -> u64 {
        self.id_key.get_val(doc)
    }
}
