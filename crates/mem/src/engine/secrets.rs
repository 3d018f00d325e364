//! Secrets already in memory files (written before mem redacted every write, or by hand):
//! found for `mem health`, replaced by `mem redact`.

use jiff::Timestamp;
use serde::Serialize;

use super::Files;
use crate::Result;
use crate::format::updated_at;
use crate::store::{self, Overwrite};
use crate::untrusted::{self, Links};

/// A memory file whose body holds secrets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SecretFile {
    /// Its path relative to the root.
    pub path: String,
    /// How many secrets its body holds (see [`crate::capture::redact`]).
    pub secrets: usize,
}

impl Files {
    /// Of the memory files `files` of the root (a walk of it), those whose body holds secrets,
    /// in their order. A file that cannot be read or does not parse is left to the index's
    /// checks.
    pub(crate) fn secret_files(&self, files: &[store::FileStat]) -> Vec<SecretFile> {
        self.with_secrets(files).into_iter().map(|(file, _)| file).collect()
    }

    /// Replaces the secrets in the bodies of the root's memory files (the front-matter is left
    /// as it is but for `updated`, set to `now`), each file written whole and at once; with
    /// `dry_run`, writes nothing. The files that held some.
    pub fn redact_files(&mut self, dry_run: bool, now: Timestamp) -> Result<Vec<SecretFile>> {
        let found = self.with_secrets(&store::scan(&self.root).files);
        if !dry_run {
            for (file, text) in &found {
                let path = self.root.join(&file.path);
                let text = crate::format::edit_front_matter(text, &[updated_at(now)]).map_err(
                    |source| crate::Error::Parse { path: file.path.clone().into(), source },
                )?;
                store::write_atomic(&path, text.as_bytes(), Overwrite::Yes)?;
            }
        }
        Ok(found.into_iter().map(|(file, _)| file).collect())
    }

    /// Each of `files` whose body holds secrets, with its text redacted.
    fn with_secrets(&self, files: &[store::FileStat]) -> Vec<(SecretFile, String)> {
        let max = self.config.limits.max_file_bytes;
        let mut found = Vec::new();
        for file in files {
            let path = self.root.join(&file.rel);
            let Ok(Some(text)) = untrusted::read_text(&path, max, Links::InFolder) else {
                continue;
            };
            let Ok((_, body)) = crate::format::split_front_matter(&text) else { continue };
            let (clean, secrets) = crate::capture::redact(body);
            if secrets == 0 {
                continue;
            }
            let Ok(redacted) = crate::format::with_body(&text, &clean) else { continue };
            found.push((SecretFile { path: file.rel.clone(), secrets }, redacted));
        }
        found
    }
}
