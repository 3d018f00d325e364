//! Reading the team store's memories themselves rather than searching them: one by its project
//! and id ([`Team::get`]), and the ones pushed last ([`Team::recent`]). Live rows only, as
//! recall serves them, from the same table under the same row-level security: a role reads
//! only the projects granted to it. The rows are data, as recall's: text to be fenced and
//! labelled with their project and author by whoever shows them.

use crate::{Result, Team};

/// A live memory of the team store, whole.
#[derive(Clone, Debug)]
pub struct TeamMemory {
    /// The project it was published from (`~author` for a user layer's).
    pub project: String,
    /// Its id.
    pub id: String,
    /// `project` or `user`.
    pub layer: String,
    /// Who published it.
    pub author: String,
    /// Its title.
    pub title: String,
    /// Its body.
    pub body: String,
    /// `episodic`, `semantic` or `procedural`.
    pub kind: String,
    /// 1 to 10.
    pub importance: i16,
    /// When it was written.
    pub created: String,
    /// When it was last edited, if it was.
    pub updated: Option<String>,
    /// When the store last received it.
    pub pushed: String,
}

/// The columns a memory reads, in order.
const COLUMNS: &str = "project, id, layer, author, title, body, kind, importance, created::text, \
                       updated::text, pushed_at::text";

impl Team {
    /// The live memory `id` of `project`, when there is one this role may see (`None` for
    /// one forgotten, superseded or archived, as recall leaves those out).
    pub fn get(&mut self, project: &str, id: &str) -> Result<Option<TeamMemory>> {
        let row = self.client.query_opt(
            &format!(
                "SELECT {COLUMNS} FROM mem_memories \
                 WHERE project = $1 AND id = $2 AND state = 'live'"
            ),
            &[&project, &id],
        )?;
        Ok(row.as_ref().map(memory))
    }

    /// The `limit` live memories the store received last, newest first (on equal times by
    /// project and id): only those of `kinds` when it names any, none whose id is in
    /// `leave_out` (the ones a local layer holds).
    pub fn recent(
        &mut self,
        limit: usize,
        kinds: &[String],
        leave_out: &[String],
    ) -> Result<Vec<TeamMemory>> {
        let rows = self.client.query(
            &format!(
                "SELECT {COLUMNS} FROM mem_memories \
                 WHERE state = 'live' AND (cardinality($1::text[]) = 0 OR kind = ANY($1)) \
                 AND NOT (id = ANY($2::text[])) \
                 ORDER BY pushed_at DESC, project, id LIMIT $3"
            ),
            &[&kinds, &leave_out, &(limit as i64)],
        )?;
        Ok(rows.iter().map(memory).collect())
    }
}

/// A memory from a row whose first columns are [`COLUMNS`] (the search functions' too).
pub(crate) fn memory(row: &postgres::Row) -> TeamMemory {
    TeamMemory {
        project: row.get(0),
        id: row.get(1),
        layer: row.get(2),
        author: row.get(3),
        title: row.get(4),
        body: row.get(5),
        kind: row.get(6),
        importance: row.get(7),
        created: row.get(8),
        updated: row.get(9),
        pushed: row.get(10),
    }
}
