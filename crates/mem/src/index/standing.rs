//! What pruning and decay read of every memory, from the index's columns rather than the files:
//! the aggregate that the prune review counts and pages from at any size (issue #53). The
//! columns are written with each memory's document (`schema.rs`), so a refresh keeps them as
//! current as the index.

use jiff::Timestamp;
use tantivy::columnar::StrColumn;
use tantivy::{DocAddress, SegmentReader};

use super::MemoryIndex;
use super::schema::{NO_ACCESS, NO_STRENGTH, NO_TIME, VALID_FOREVER};
use crate::decay::Basis;
use crate::format::{Access, MemoryType};
use crate::prune::Standing;
use crate::{Error, Result};

impl MemoryIndex {
    /// Every indexed memory's [`Standing`], read from the columns (titles are left empty: the
    /// caller adds those it shows with [`MemoryIndex::titles`]), in the index's order.
    pub fn standings(&self) -> Result<Vec<Standing>> {
        let searcher = self.reader.searcher();
        let mut out = Vec::with_capacity(searcher.num_docs() as usize);
        for segment in searcher.segment_readers() {
            segment_standings(segment, &mut out)?;
        }
        Ok(out)
    }

    /// The title of each memory at `paths` (relative to the root) that the index holds, by
    /// path, reading only their stored documents.
    pub fn titles(&self, paths: &[&str]) -> Result<std::collections::HashMap<String, String>> {
        let searcher = self.reader.searcher();
        let terms = paths.iter().map(|p| tantivy::Term::from_field_text(self.fields.path, p));
        let query = tantivy::query::TermSetQuery::new(terms);
        let mut addresses: Vec<DocAddress> =
            searcher.search(&query, &tantivy::collector::DocSetCollector)?.into_iter().collect();
        // In the store's order, so that each compressed block is read once.
        addresses.sort();
        let mut titles = std::collections::HashMap::with_capacity(addresses.len());
        for address in addresses {
            let doc: tantivy::TantivyDocument = searcher.doc(address)?;
            titles.insert(
                super::text_of(&doc, self.fields.path),
                super::text_of(&doc, self.fields.title),
            );
        }
        Ok(titles)
    }
}

/// Appends the standings of `segment`'s live documents to `out`.
fn segment_standings(segment: &SegmentReader, out: &mut Vec<Standing>) -> Result<()> {
    let ff = segment.fast_fields();
    let column = |name: &str| -> Result<StrColumn> {
        ff.str(name)?.ok_or_else(|| corrupt(&format!("no column `{name}`")))
    };
    let (ids, paths, kinds) = (column("id")?, column("path")?, column("type")?);
    let superseded = ff.str("superseded_by")?;
    let (id_terms, path_terms) = (terms(&ids)?, terms(&paths)?);
    let kind_terms: Vec<MemoryType> = terms(&kinds)?
        .iter()
        .map(|k| k.parse().map_err(|_| corrupt(&format!("unknown type {k:?}"))))
        .collect::<Result<_>>()?;
    let superseded_terms = superseded.as_ref().map(terms).transpose()?.unwrap_or_default();
    let importance = ff.u64("importance")?;
    let created = ff.i64("created")?;
    let invalid_at = ff.i64("invalid_at")?;
    let into_key = ff.u64("into_key")?;
    let uses = ff.u64("access_uses")?;
    let retrieved = ff.u64("access_retrieved")?;
    let last = ff.i64("access_last")?;
    let strength = ff.f64("access_strength")?;
    let text_key = ff.u64("text_key")?;
    let term = |col: &StrColumn, all: &[String], doc| {
        col.ords().first(doc).and_then(|o| all.get(o as usize)).cloned()
    };
    for doc in segment.doc_ids_alive() {
        let (Some(id), Some(path)) = (term(&ids, &id_terms, doc), term(&paths, &path_terms, doc))
        else {
            return Err(corrupt("a document without its id or path"));
        };
        let kind = kinds.ords().first(doc).and_then(|o| kind_terms.get(o as usize).copied());
        let created = created.first(doc).and_then(|s| Timestamp::from_second(s).ok());
        let (Some(kind), Some(created)) = (kind, created) else {
            return Err(corrupt("a document without its type or creation time"));
        };
        let access = uses.first(doc).filter(|&n| n != NO_ACCESS).map(|count| Access {
            count,
            last: last
                .first(doc)
                .filter(|&ns| ns != NO_TIME)
                .and_then(|ns| Timestamp::from_nanosecond(i128::from(ns)).ok()),
            retrieved: retrieved.first(doc).unwrap_or(0),
            strength: strength.first(doc).filter(|&s| s != NO_STRENGTH),
        });
        out.push(Standing {
            id,
            path,
            title: String::new(),
            basis: Basis {
                kind,
                importance: importance.first(doc).unwrap_or(5).min(u64::from(u8::MAX)) as u8,
                created,
                access,
                consolidated: into_key.first(doc).is_some_and(|k| k != 0),
            },
            invalid_at: invalid_at
                .first(doc)
                .filter(|&s| s != VALID_FOREVER)
                .and_then(|s| Timestamp::from_second(s).ok()),
            superseded_by: superseded.as_ref().and_then(|col| term(col, &superseded_terms, doc)),
            text_key: text_key.first(doc).unwrap_or(0),
        });
    }
    Ok(())
}

/// Every term of a text column's dictionary, in ordinal order.
fn terms(column: &StrColumn) -> Result<Vec<String>> {
    let mut all = Vec::with_capacity(column.dictionary().num_terms());
    let mut stream = column.dictionary().stream().map_err(io)?;
    while stream.advance() {
        all.push(String::from_utf8_lossy(stream.key()).into_owned());
    }
    Ok(all)
}

/// An I/O error of the index's files, as an index error.
fn io(e: std::io::Error) -> Error {
    Error::Index(e.into())
}

/// The error of a column that does not hold what the schema says.
fn corrupt(what: &str) -> Error {
    Error::Index(tantivy::TantivyError::InvalidArgument(format!("index columns: {what}")))
}

impl MemoryIndex {
    /// Each live memory's `source` that starts with `prefix`, once per memory (a source two
    /// memories share is there twice), from the terms of the `source` field: no stored
    /// document is read.
    pub fn sources_starting(&self, prefix: &str) -> Result<Vec<String>> {
        let searcher = self.reader.searcher();
        let mut found = Vec::new();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.source)?;
            let mut terms =
                inverted.terms().range().ge(prefix.as_bytes()).into_stream().map_err(io)?;
            while terms.advance() {
                let Ok(source) = std::str::from_utf8(terms.key()) else { continue };
                if !source.starts_with(prefix) {
                    break;
                }
                let mut postings = inverted
                    .read_postings_from_terminfo(
                        terms.value(),
                        tantivy::schema::IndexRecordOption::Basic,
                    )
                    .map_err(io)?;
                let alive = segment.alive_bitset();
                let mut doc = tantivy::DocSet::doc(&postings);
                while doc != tantivy::TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        found.push(source.to_string());
                    }
                    doc = tantivy::DocSet::advance(&mut postings);
                }
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Memory;
    use crate::index::{Reading, Scope};

    const FILES: [(&str, &str); 5] = [
        (
            "plain.md",
            "---\nid: plain\ntype: episodic\ncreated: 2025-03-01T10:00:00Z\n---\nSame  Text\n",
        ),
        (
            "used.md",
            "---\nid: used\ntype: semantic\nimportance: 8\ncreated: 2025-01-01\naccess: { count: 3, \
             last: 2026-02-03T04:05:06.789Z, retrieved: 7, strength: 12.5 }\n---\nsame text\n",
        ),
        (
            "a/gone.md",
            "---\nid: gone\ntype: procedural\ncreated: 2025-01-01\ninvalid_at: 2026-01-01T00:00:00Z\n\
             superseded_by: used\naccess: { count: 0, retrieved: 2 }\n---\nold way\n",
        ),
        (
            "a/merged.md",
            "---\nid: merged\ntype: episodic\ncreated: 2025-01-01\nconsolidated_into: r1\n---\nx\n",
        ),
        (
            "session.md",
            "---\nid: s1\ntype: episodic\ncreated: 2025-01-01\nsource: session/abc\n---\nd\n",
        ),
    ];

    fn index_of(dir: &std::path::Path) -> MemoryIndex {
        std::fs::create_dir_all(dir.join(".mem")).unwrap();
        let mut index = MemoryIndex::create(&dir.join(".mem")).unwrap();
        refresh(&mut index, dir);
        index
    }

    fn refresh(index: &mut MemoryIndex, dir: &std::path::Path) {
        let reading = Reading { max_file_bytes: 1 << 20, known_bad: &[] };
        let now = "2026-11-30T12:00:00Z".parse().unwrap();
        let scan = crate::store::scan(dir);
        index.refresh(dir, scan, Scope::All, reading, now, &crate::progress::Silent).unwrap();
    }

    /// The columns give each memory what its file gives (all but the title), so that pruning
    /// and the prune review, which read them, agree with `mem show`, which reads the file.
    #[test]
    fn the_columns_give_what_the_files_give() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        for (rel, text) in FILES {
            std::fs::write(dir.path().join(rel), text).unwrap();
        }
        let index = index_of(dir.path());
        let mut got = index.standings().unwrap();
        got.sort_by(|a, b| a.path.cmp(&b.path));
        let mut want: Vec<Standing> = FILES
            .iter()
            .map(|(rel, text)| {
                let memory = Memory::parse_bytes(text.as_bytes()).unwrap();
                Standing { title: String::new(), ..Standing::of(rel, &memory) }
            })
            .collect();
        want.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(got, want);
        assert!(want.iter().any(|s| s.basis.access.is_some_and(|a| a.strength == Some(12.5))));
        assert_eq!(got[2].text_key, got[4].text_key, "the same text, case and spacing aside");
        let titles = index.titles(&["used.md", "missing.md"]).unwrap();
        assert_eq!(titles.len(), 1);
        assert_eq!(titles["used.md"], "same text");
    }

    /// The sources come from the terms, live documents only: a memory removed since is not
    /// there, though its term may remain until a merge.
    #[test]
    fn sources_are_the_live_memories_sources() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        for (rel, text) in FILES {
            std::fs::write(dir.path().join(rel), text).unwrap();
        }
        let copy = FILES[4].1.replace("id: s1", "id: s2");
        std::fs::write(dir.path().join("copy.md"), copy).unwrap();
        let mut index = index_of(dir.path());
        assert_eq!(index.sources_starting("session/").unwrap(), ["session/abc", "session/abc"]);
        assert!(index.sources_starting("person/").unwrap().is_empty());
        std::fs::remove_file(dir.path().join("copy.md")).unwrap();
        refresh(&mut index, dir.path());
        assert_eq!(index.sources_starting("session/").unwrap(), ["session/abc"]);
    }
}
