//! Which agents' sessions a root should have captured, and why those missing were not: what
//! `mem health --transcripts` and the page's capture view both report.

use std::path::{Path, PathBuf};

use mem::agent::{Agent, Homes, Missed};
use mem::health::Sources;

/// Why the sessions `cov` found missing were not captured, as each agent's spec tells.
pub fn missed_causes(
    cov: &mem::health::Coverage,
    project: &Path,
    configured: &[crate::setup::Configured],
    homes: &Homes,
) -> Vec<String> {
    let files: Vec<PathBuf> = configured.iter().map(|c| PathBuf::from(&c.file)).collect();
    let untrusted = configured.iter().any(|c| c.trusted == Some(false));
    let mut causes = Vec::new();
    for agent in Agent::ALL {
        let transcripts: Vec<&Path> =
            cov.gaps.iter().filter(|g| g.agent == agent).map(|g| Path::new(&g.path)).collect();
        if transcripts.is_empty() {
            continue;
        }
        let missed = Missed {
            project,
            home: homes.of(agent),
            transcripts: &transcripts,
            configured: &files,
            untrusted,
        };
        causes.extend((agent.spec().missed_because)(&missed));
    }
    causes
}

/// Where to find the sessions of `project`: `given`, widened when it is an agent's folder of
/// the project to those of its subfolders (`agent::Spec::widen_folder`); without `given`, the
/// agents' own folders and stores.
pub fn transcript_folders(given: Option<&Path>, project: &Path, homes: &Homes) -> Sources {
    let Some(given) = given else {
        let folders = Agent::ALL
            .into_iter()
            .filter_map(|a| Some((a.spec().transcript_folders)(homes.of(a)?, project)))
            .flatten()
            .collect();
        let stores = Agent::ALL
            .into_iter()
            .filter(|a| a.spec().stored.is_some())
            .filter_map(|a| Some((a, homes.of(a)?.to_path_buf())))
            .collect();
        return Sources { folders, stores };
    };
    let folders = Agent::ALL
        .into_iter()
        .find_map(|a| (a.spec().widen_folder)(given, project))
        .unwrap_or_else(|| vec![given.to_path_buf()]);
    Sources { folders, stores: Vec::new() }
}
