//! Reading the typed fields of a memory out of its front-matter mapping, for [`Memory::parse`].
//!
//! [`Memory::parse`]: super::Memory::parse

use jiff::Timestamp;
use serde_norway::{Mapping, Value};

use super::{
    Access, DEFAULT_IMPORTANCE, FormatError, MemoryId, MemoryType, describe, key_line, scalar_text,
    timestamp,
};

/// The front-matter mapping and its YAML text, read field by field into typed values.
pub(super) struct Fields<'a> {
    pub(super) front: &'a Mapping,
    pub(super) yaml: &'a str,
}

impl<'a> Fields<'a> {
    /// The value of a top-level key, or nothing when the key is missing or empty.
    pub(super) fn get(&self, name: &str) -> Option<&'a Value> {
        self.front.get(name).filter(|v| !v.is_null())
    }

    /// An error about the field `name`, pointing at the line where its key is written.
    fn error(&self, name: &'static str, message: String) -> FormatError {
        FormatError::Field { field: name, line: key_line(self.yaml, name), message }
    }

    /// Reads the required `id`, refusing numbers that YAML would silently change.
    pub(super) fn id(&self) -> Result<MemoryId, FormatError> {
        let id = match self.get("id") {
            None => return Err(FormatError::Missing("id")),
            Some(Value::String(s)) => s,
            Some(Value::Number(n)) => {
                // YAML reads `id: 007` as the number 7: the id would silently change.
                let message = format!("{n} is read as a number; quote it: id: \"{n}\"");
                return Err(self.error("id", message));
            }
            Some(other) => {
                return Err(self.error("id", format!("expected text, found {}", describe(other))));
            }
        };
        MemoryId::new(id).map_err(|e| self.error("id", e.to_string()))
    }

    /// Reads the required `type`.
    pub(super) fn kind(&self) -> Result<MemoryType, FormatError> {
        match self.get("type") {
            None => Err(FormatError::Missing("type")),
            Some(Value::String(s)) => s.parse::<MemoryType>().map_err(|e| self.error("type", e)),
            Some(other) => Err(self.error(
                "type",
                format!("expected episodic, semantic or procedural, found {}", describe(other)),
            )),
        }
    }

    /// Reads `importance`, an integer 1..=10 ([`DEFAULT_IMPORTANCE`] when absent).
    pub(super) fn importance(&self) -> Result<u8, FormatError> {
        match self.get("importance") {
            None => Ok(DEFAULT_IMPORTANCE),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i @ 1..=10) => Ok(i as u8),
                _ => Err(self.error("importance", format!("must be 1..10, found {n}"))),
            },
            Some(other) => Err(self.error(
                "importance",
                format!("expected an integer 1..10, found {}", describe(other)),
            )),
        }
    }

    /// Reads the time in the field `name`, if there is one.
    pub(super) fn time(&self, name: &'static str) -> Result<Option<Timestamp>, FormatError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => timestamp(v).map(Some).map_err(|m| self.error(name, m)),
        }
    }

    /// Reads `tags` as a list of words, trimmed, with blank ones dropped.
    pub(super) fn tags(&self) -> Result<Vec<String>, FormatError> {
        let items = match self.get("tags") {
            None => return Ok(Vec::new()),
            Some(Value::Sequence(items)) => items,
            Some(other) => {
                return Err(self.error(
                    "tags",
                    format!("expected a list like [auth, login], found {}", describe(other)),
                ));
            }
        };
        let mut tags = Vec::with_capacity(items.len());
        for item in items {
            match scalar_text(item) {
                Some(t) if !t.trim().is_empty() => tags.push(t.trim().to_string()),
                Some(_) => {}
                None => {
                    return Err(self.error(
                        "tags",
                        format!("expected a list of words, found {} in it", describe(item)),
                    ));
                }
            }
        }
        Ok(tags)
    }

    /// Reads `source` as text, if there is one.
    pub(super) fn source(&self) -> Result<Option<String>, FormatError> {
        match self.get("source") {
            None => Ok(None),
            Some(v) => scalar_text(v).map(Some).ok_or_else(|| {
                self.error("source", format!("expected text, found {}", describe(v)))
            }),
        }
    }

    /// Reads the `access` usage summary (count, last, retrieved, strength), if there is one.
    pub(super) fn access(&self) -> Result<Option<Access>, FormatError> {
        let m = match self.get("access") {
            None => return Ok(None),
            Some(Value::Mapping(m)) => m,
            Some(other) => {
                return Err(self.error(
                    "access",
                    format!(
                        "expected {{ count: N, last: TIME, retrieved: N, strength: DAYS }}, found {}",
                        describe(other)
                    ),
                ));
            }
        };
        let count = self.access_whole(m, "count")?;
        let retrieved = self.access_whole(m, "retrieved")?;
        let last = match m.get("last") {
            None | Some(Value::Null) => None,
            Some(v) => Some(timestamp(v).map_err(|e| self.error("access", format!("last: {e}")))?),
        };
        let strength = self.access_strength(m)?;
        Ok(Some(Access { count, last, retrieved, strength }))
    }

    /// Reads the whole number `key` of the `access` mapping (0 when absent).
    fn access_whole(&self, m: &Mapping, key: &str) -> Result<u64, FormatError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Number(n)) => n.as_u64().ok_or_else(|| {
                self.error("access", format!("{key} must be a whole number ≥ 0, found {n}"))
            }),
            Some(other) => Err(self.error(
                "access",
                format!("{key} must be a whole number, found {}", describe(other)),
            )),
        }
    }

    /// Reads the `strength` of the `access` mapping, a positive number of days, if there is one.
    fn access_strength(&self, m: &Mapping) -> Result<Option<f64>, FormatError> {
        match m.get("strength") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(s) if s > 0.0 && s.is_finite() => Ok(Some(s)),
                _ => Err(self.error(
                    "access",
                    format!("strength must be a positive number of days, found {n}"),
                )),
            },
            Some(other) => Err(self.error(
                "access",
                format!("strength must be a number of days, found {}", describe(other)),
            )),
        }
    }

    /// Reads `superseded_by`, the id of the memory that replaces this one, if there is one.
    pub(super) fn superseded_by(&self) -> Result<Option<MemoryId>, FormatError> {
        match self.get("superseded_by") {
            None => Ok(None),
            Some(Value::String(s)) => {
                MemoryId::new(s).map(Some).map_err(|e| self.error("superseded_by", e.to_string()))
            }
            Some(other) => Err(self.error(
                "superseded_by",
                format!("expected the id of another memory, found {}", describe(other)),
            )),
        }
    }

    /// Reads `derived_from`, the list of ids this memory was consolidated from.
    pub(super) fn derived_from(&self) -> Result<Vec<MemoryId>, FormatError> {
        match self.get("derived_from") {
            None => Ok(Vec::new()),
            Some(Value::Sequence(items)) => {
                items.iter().map(|v| self.memory_id("derived_from", v)).collect()
            }
            Some(other) => Err(self.error(
                "derived_from",
                format!("expected a list of memory ids, found {}", describe(other)),
            )),
        }
    }

    /// Reads `v`, found in the field `name`, as a memory id.
    pub(super) fn memory_id(&self, name: &'static str, v: &Value) -> Result<MemoryId, FormatError> {
        match v {
            Value::String(s) => MemoryId::new(s).map_err(|e| self.error(name, e.to_string())),
            other => {
                Err(self.error(name, format!("expected a memory id, found {}", describe(other))))
            }
        }
    }
}
