//! The parsers of the command line's values that several commands share (`--now`, `--type`,
//! `--layer`, `--mode`, `--fusion`, shares) and the error of an option the settings refuse.

use jiff::Timestamp;
use mem::MemoryType;

/// Parses `--now` (RFC 3339).
pub(crate) fn parse_now(s: &str) -> std::result::Result<Timestamp, String> {
    mem::format::parse_time(s)
}

/// `--type` values.
pub(super) fn parse_type(s: &str) -> std::result::Result<MemoryType, String> {
    s.parse()
}

/// The values of `--layer`.
pub(super) fn layer_parser() -> impl clap::builder::TypedValueParser<Value = mem::store::Layer> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(["project", "user"])
        .map(|s| s.parse().expect("clap checked it is a possible value"))
}

/// Parses any layer recall can search: `project`, `user`, or an agent's own memories (the
/// layer names of the agents' specs).
pub(super) fn any_layer_parser() -> impl clap::builder::TypedValueParser<Value = mem::store::Layer>
{
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(mem::store::Layer::names())
        .map(|s| s.parse().expect("clap checked it is a possible value"))
}

/// Parses a share between 0 and 1 (`--min-strength`).
pub(super) fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("expected a number from 0 to 1, got {s:?}")),
    }
}

/// Parses `--mode`: one of the library's recall modes, each listed in the help.
pub(super) fn recall_mode_parser()
-> impl clap::builder::TypedValueParser<Value = mem::config::RecallMode> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let modes = mem::config::RecallMode::ALL;
    PossibleValuesParser::new(modes.map(|m| PossibleValue::new(m.as_str()).help(m.describe())))
        .map(|s| s.parse().expect("clap checked it is a possible value"))
}

/// Parses `--fusion`: one of the library's fusions, each listed in the help.
pub(super) fn fusion_parser() -> impl clap::builder::TypedValueParser<Value = mem::config::Fusion> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let fusions = mem::config::Fusion::ALL;
    PossibleValuesParser::new(fusions.map(|f| PossibleValue::new(f.as_str()).help(f.describe())))
        .map(|s| s.parse().expect("clap checked it is a possible value"))
}

/// A settings error about a command-line override, named as the option (`--min-cluster`).
pub(super) fn option_error(e: mem::config::SettingError) -> anyhow::Error {
    anyhow::anyhow!("--{} {}", e.key.replace('_', "-"), e.message)
}
