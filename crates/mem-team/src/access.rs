//! Who sees what in the team store: row-level security on the memories (migration
//! `002_access.sql`, its check made per statement in `003_search.sql`). A database role reads and writes the rows of the projects granted to it
//! (or to a role it is a member of) and nothing else; the owner of the tables (who ran
//! `mem team init`) and superusers see every row and are the ones who grant.

use crate::{Error, Result, Team};

impl Team {
    /// Grants `project` to `role`: the role may then read and write that project's rows (and is
    /// given the table rights the grant needs). `false` when it was granted already.
    pub fn grant(&mut self, role: &str, project: &str) -> Result<bool> {
        self.check_schema()?;
        let mut tx = self.client.transaction()?;
        let found: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1)",
                &[&role],
            )?
            .get(0);
        if !found {
            return Err(Error::NoRole(role.to_string()));
        }
        // The role's name is quoted by the server (format's %I), never pasted in.
        let rights: String = tx
            .query_one(
                "SELECT format('GRANT SELECT, INSERT, UPDATE, DELETE ON mem_memories TO %1$I; \
                 GRANT SELECT ON mem_schema TO %1$I', $1::text)",
                &[&role],
            )?
            .get(0);
        tx.batch_execute(&rights)?;
        let added = tx.execute(
            "INSERT INTO mem_grants (role, project) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&role, &project],
        )?;
        tx.commit()?;
        Ok(added == 1)
    }

    /// Takes `project` back from `role`: its rows are no longer the role's to see. `false` when
    /// the role had no such grant. The table rights stay (without a grant they show nothing).
    pub fn revoke(&mut self, role: &str, project: &str) -> Result<bool> {
        self.check_schema()?;
        let removed = self.client.execute(
            "DELETE FROM mem_grants WHERE role = $1 AND project = $2",
            &[&role, &project],
        )?;
        Ok(removed == 1)
    }

    /// Every grant, as (role, project), sorted: only for the tables' owner or a superuser.
    pub fn grants(&mut self) -> Result<Vec<(String, String)>> {
        self.check_schema()?;
        let rows =
            self.client.query("SELECT role::text, project FROM mem_grants ORDER BY 1, 2", &[])?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }
}
