//! Facts from what the user says: the durable statements capture finds in a session's prompts
//! ([`crate::capture::facts`]) become memories of their own, or uses of the memory that holds
//! them already, or new memories that supersede a fact they change. Once per (session,
//! statement), however often the transcript is read.

use super::Admission;
use crate::Result;
use crate::capture::facts::{FACT_IMPORTANCE, FACT_TAG, Facts, Stated, normal};
use crate::capture::{SESSION_SOURCE, is_digest, project_tag, redact};
use crate::format::{Memory, MemoryType, NewMemory};
use jiff::Timestamp;

/// Whether `memory` is a fact a statement can repeat or change: semantic or procedural, not a
/// digest, not superseded.
fn is_fact(memory: &Memory) -> bool {
    matches!(memory.kind(), MemoryType::Semantic | MemoryType::Procedural)
        && !is_digest(memory)
        && memory.superseded_by().is_none()
}

/// The key of a statement in the session log: the hash of its compared form.
fn key(text: &str) -> String {
    blake3::hash(normal(text).as_bytes()).to_hex()[..32].to_string()
}

impl super::capture::Capturing<'_> {
    /// Takes the statements `stated` of session `session` (started in `cwd`), each with when it
    /// was made (else `now`): redacted, then a use of the fact that holds it exactly, else a new
    /// memory (semantic, or procedural for a way of working) with `source: session/<id>`, which
    /// supersedes a very similar fact ([`super::admit::admit`]'s measure) that it changes. Statements
    /// of the session taken before are skipped.
    pub(super) fn take_facts(
        &mut self,
        session: &str,
        stated: &[(Stated, Option<Timestamp>)],
        cwd: Option<&str>,
        now: Timestamp,
    ) -> Result<Facts> {
        let mut facts = Facts { stated: stated.len(), ..Facts::default() };
        let mut todo = Vec::new();
        for (said, at) in stated {
            let (text, _) = redact(&said.text);
            let key = key(&text);
            if self.sessions.log()?.fact_taken(session, &key)?.is_some() {
                facts.seen += 1;
            } else {
                todo.push((text, key, said.kind, at.unwrap_or(now).min(now)));
            }
        }
        if todo.is_empty() {
            return Ok(facts);
        }
        self.files.refresh(self.usage, now, &crate::progress::Silent)?;
        let mut tags = vec![FACT_TAG.to_string()];
        tags.extend(cwd.and_then(project_tag));
        for (text, key, kind, at) in todo {
            let new = NewMemory {
                text,
                kind,
                importance: FACT_IMPORTANCE,
                tags: tags.clone(),
                title: None,
                source: Some(format!("{SESSION_SOURCE}{session}")),
            };
            let (memory, outcome) =
                match super::admit::admit_among(self.files, self.vectors, &new, at, is_fact)? {
                    Admission::Duplicate { id, .. } => {
                        self.usage.used(self.files, std::slice::from_ref(&id), at, true)?;
                        facts.used.push(id.clone());
                        (id, "used")
                    }
                    admission => {
                        // Its text was redacted above, where its key was made.
                        let added = self.files.write_new(new, at)?;
                        self.files.refresh(self.usage, now, &crate::progress::Silent)?;
                        // Saying it is its first use, as saying it again is the next one.
                        self.usage.used(self.files, std::slice::from_ref(&added.id), at, true)?;
                        facts.added.push(added.id.clone());
                        match admission {
                            Admission::Similar(old) => {
                                self.files.supersede(&old.id, &added.id, at)?;
                                facts.superseded.push((old.id, added.id.clone()));
                                (added.id, "superseded")
                            }
                            _ => (added.id, "added"),
                        }
                    }
                };
            self.sessions.log()?.record_fact(session, &key, &memory, outcome, at)?;
        }
        Ok(facts)
    }
}
