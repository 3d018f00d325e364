//! `mem team push`: the rows the store does not hold yet (by hash, so a push sends only what
//! changed since any machine's last push of them, and a second push sends nothing), their
//! vectors computed only for those, sent in batches of one transaction each: an interrupted
//! push leaves every row either as it was or as it is now, never half of one. Memories marked
//! never to publish, and those whose files were deleted since the root's last push, are taken
//! out of the store in one more transaction.

use std::collections::{HashMap, HashSet};

use pgvector::Vector;

use crate::publish::Row;
use crate::{Result, Team};

/// Vectors for rows (of their [`crate::publish::embedding_text`]): the model's id and one unit
/// vector per row.
pub type Embed<'a> = dyn FnMut(&[Row]) -> Option<(String, Vec<Vec<f32>>)> + 'a;

/// What a push did.
#[derive(Debug, Default)]
pub struct Pushed {
    /// Rows sent (new or changed).
    pub sent: usize,
    /// Rows the store already held as they are.
    pub unchanged: usize,
    /// Rows taken out of the store (marked never to publish).
    pub withdrawn: u64,
    /// Rows taken out of the store because their files were deleted.
    pub deleted: u64,
    /// Transactions committed.
    pub batches: usize,
    /// Rows sent with a vector.
    pub with_vectors: usize,
}

const UPSERT: &str = "INSERT INTO mem_memories (project, id, layer, author, machine, path, kind, \
    importance, created, updated, state, front_matter, title, body, hash, model, dim, embedding, \
    pushed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::timestamptz, \
    $10::text::timestamptz, $11, $12::text::jsonb, $13, $14, $15, $16, $17, $18, now()) \
    ON CONFLICT (project, id) DO UPDATE SET layer = EXCLUDED.layer, author = EXCLUDED.author, \
    machine = EXCLUDED.machine, path = EXCLUDED.path, kind = EXCLUDED.kind, \
    importance = EXCLUDED.importance, created = EXCLUDED.created, updated = EXCLUDED.updated, \
    state = EXCLUDED.state, front_matter = EXCLUDED.front_matter, title = EXCLUDED.title, \
    body = EXCLUDED.body, hash = EXCLUDED.hash, model = EXCLUDED.model, dim = EXCLUDED.dim, \
    embedding = EXCLUDED.embedding, pushed_at = now()";

impl Team {
    /// Publishes `rows` (of the projects they name), `batch` rows per transaction; withdraws
    /// the memories `private` and `deleted` name (project, id), in one transaction after the
    /// rows (a memory named in `rows` is never withdrawn); `embed` gives vectors for the rows sent
    /// (`None`: no model, rows go without vectors). `model` is the id of the model `embed`
    /// uses, if any: a row stored with another model's vector is sent again.
    pub fn push(
        &mut self,
        rows: Vec<Row>,
        private: &[(String, String)],
        deleted: &[(String, String)],
        model: Option<&str>,
        embed: &mut Embed<'_>,
        batch: usize,
    ) -> Result<Pushed> {
        self.check_schema()?;
        let mut pushed = Pushed::default();
        let mut projects: Vec<&str> = rows.iter().map(|r| r.project.as_str()).collect();
        projects.extend(private.iter().map(|(p, _)| p.as_str()));
        projects.sort_unstable();
        projects.dedup();
        let mut held: HashMap<(String, String), (String, Option<String>)> = HashMap::new();
        for row in self.client.query(
            "SELECT project, id, hash, model FROM mem_memories WHERE project = ANY($1)",
            &[&projects],
        )? {
            held.insert((row.get(0), row.get(1)), (row.get(2), row.get(3)));
        }
        let named: HashSet<(String, String)> =
            rows.iter().map(|r| (r.project.clone(), r.id.clone())).collect();
        let mut todo = Vec::new();
        for row in rows {
            let key = (row.project.clone(), row.id.clone());
            let same = held.get(&key).is_some_and(|(hash, stored)| {
                *hash == row.hash && (model.is_none() || stored.as_deref() == model)
            });
            if same {
                pushed.unchanged += 1;
            } else {
                todo.push(row);
            }
        }
        for chunk in todo.chunks(batch.max(1)) {
            let vectors = embed(chunk);
            let mut tx = self.client.transaction()?;
            let statement = tx.prepare(UPSERT)?;
            for (i, row) in chunk.iter().enumerate() {
                let (model, dim, vector) = match &vectors {
                    Some((model, vectors)) => {
                        let v = &vectors[i];
                        (Some(model.as_str()), Some(v.len() as i32), Some(Vector::from(v.clone())))
                    }
                    None => (None, None, None),
                };
                let created = row.created.to_string();
                let updated = row.updated.map(|t| t.to_string());
                let front_matter = row.front_matter.to_string();
                tx.execute(
                    &statement,
                    &[
                        &row.project,
                        &row.id,
                        &row.layer,
                        &row.author,
                        &row.machine,
                        &row.path,
                        &row.kind,
                        &row.importance,
                        &created,
                        &updated,
                        &row.state.as_str(),
                        &front_matter,
                        &row.title,
                        &row.body,
                        &row.hash,
                        &model,
                        &dim,
                        &vector,
                    ],
                )?;
                pushed.with_vectors += usize::from(vector.is_some());
            }
            tx.commit()?;
            pushed.sent += chunk.len();
            pushed.batches += 1;
        }
        let gone = |pairs: &[(String, String)]| -> Vec<(String, String)> {
            pairs.iter().filter(|pair| !named.contains(*pair)).cloned().collect()
        };
        let (private, deleted) = (gone(private), gone(deleted));
        if !private.is_empty() || !deleted.is_empty() {
            let mut tx = self.client.transaction()?;
            for (pairs, count) in
                [(&private, &mut pushed.withdrawn), (&deleted, &mut pushed.deleted)]
            {
                for (project, ids) in group(pairs) {
                    *count += tx.execute(
                        "DELETE FROM mem_memories WHERE project = $1 AND id = ANY($2)",
                        &[&project, &ids],
                    )?;
                }
            }
            tx.commit()?;
        }
        Ok(pushed)
    }

    /// Removes every row `author` published; how many.
    pub fn forget_author(&mut self, author: &str) -> Result<u64> {
        self.check_schema()?;
        Ok(self.client.execute("DELETE FROM mem_memories WHERE author = $1", &[&author])?)
    }
}

/// The (project, id) pairs grouped by project.
fn group(pairs: &[(String, String)]) -> HashMap<&str, Vec<&str>> {
    let mut groups: HashMap<&str, Vec<&str>> = HashMap::new();
    for (project, id) in pairs {
        groups.entry(project).or_default().push(id);
    }
    groups
}
