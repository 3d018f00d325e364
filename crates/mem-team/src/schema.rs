//! The team store's schema, versioned: `mem_schema` holds how many of [`MIGRATIONS`] ran;
//! `mem team init` runs the missing ones in one transaction (concurrent inits take turns on an
//! advisory lock), and refuses a database whose schema is newer than this binary's. Migrations
//! are never edited, only added. The HNSW index of a vector length is made by `init` for the
//! lengths asked (a partial index per length: pgvector indexes vectors of one length).

use crate::{Error, Result, Team};

/// The migrations, in order; the schema's version is how many ran.
pub const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_memories.sql"),
    include_str!("migrations/002_access.sql"),
    include_str!("migrations/003_search.sql"),
];

/// This binary's schema version.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// The advisory lock key `mem team init` takes (any fixed number of mem's own).
const LOCK: i64 = 0x6d65_6d5f_7465_616d;

/// What `init` did.
#[derive(Debug)]
pub struct Migrated {
    /// The version found (0: a database without mem's schema).
    pub from: i32,
    /// The version now.
    pub to: i32,
    /// The vector lengths that got an HNSW index now.
    pub indexed: Vec<usize>,
}

/// The name of the HNSW index of vectors of length `dim`.
pub fn hnsw_index(dim: usize) -> String {
    format!("mem_memories_hnsw_{dim}")
}

impl Team {
    /// The database's schema version: 0 without mem's schema.
    pub fn version(&mut self) -> Result<i32> {
        let exists: bool =
            self.client.query_one("SELECT to_regclass('mem_schema') IS NOT NULL", &[])?.get(0);
        if !exists {
            return Ok(0);
        }
        Ok(self.client.query_one("SELECT version FROM mem_schema", &[])?.get(0))
    }

    /// An error unless the schema is this binary's.
    pub fn check_schema(&mut self) -> Result<()> {
        match self.version()? {
            0 => Err(Error::NoSchema),
            VERSION => Ok(()),
            found if found > VERSION => Err(Error::SchemaTooNew { found, known: VERSION }),
            found => Err(Error::SchemaOld { found, known: VERSION }),
        }
    }

    /// How many memories the store serves (live rows this role sees).
    pub fn live_count(&mut self) -> Result<i64> {
        let row = self.client.query_one("SELECT mem_live_count(current_user)", &[])?;
        Ok(row.get(0))
    }

    /// Creates or migrates the schema, and an HNSW index for each vector length of `dims`.
    pub fn init(&mut self, dims: &[usize]) -> Result<Migrated> {
        let mut tx = self.client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS mem_schema (version integer NOT NULL)")?;
        let from: i32 = match tx.query_opt("SELECT version FROM mem_schema", &[])? {
            Some(row) => row.get(0),
            None => {
                tx.execute("INSERT INTO mem_schema VALUES (0)", &[])?;
                0
            }
        };
        if from > VERSION {
            return Err(Error::SchemaTooNew { found: from, known: VERSION });
        }
        for migration in &MIGRATIONS[from as usize..] {
            tx.batch_execute(migration)?;
        }
        tx.execute("UPDATE mem_schema SET version = $1", &[&VERSION])?;
        let mut indexed = Vec::new();
        for &dim in dims {
            let name = hnsw_index(dim);
            let exists: bool = tx.query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])?.get(0);
            if !exists {
                tx.batch_execute(&format!(
                    "CREATE INDEX {name} ON mem_memories USING hnsw \
                     ((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"
                ))?;
                indexed.push(dim);
            }
        }
        tx.commit()?;
        Ok(Migrated { from, to: VERSION, indexed })
    }
}
