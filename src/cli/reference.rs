//! `engine config-reference`: the configuration reference
//! (`docs/configuration.md`) from the commands' settings tables. The
//! command line is the one layer that sees every command, so the tables
//! are gathered here and laid out by [`crate::config::render_reference`].
//! `tests/config_reference.rs` fails when the committed file differs.

use crate::config::{render_reference, CommandSettings, Row};
use crate::search::{SearchParams, SetupFor};

/// The reference, as `engine config-reference` prints it.
pub fn config_reference() -> String {
    render_reference(&commands())
}

/// Each command with the rows of every table it reads its settings from,
/// in the order of the reference's "read by" column.
fn commands() -> Vec<CommandSettings> {
    let search = SearchParams::reference_rows;
    let net = crate::setup::network_rows;
    let log = crate::logfile::config_rows;
    let patterns = crate::setup::pattern_rows;
    let command = |command, tables: Vec<Vec<Row>>| CommandSettings {
        command,
        rows: tables.concat(),
    };
    vec![
        command(
            "gtp",
            vec![
                search(SetupFor::Gtp),
                crate::gtp::config_rows(),
                log(),
                net(),
                patterns(),
                crate::setup::auto_avoid_rows(),
            ],
        ),
        command(
            "analysis",
            vec![
                search(SetupFor::Analysis),
                crate::analysis::config_rows(),
                log(),
                net(),
                patterns(),
            ],
        ),
        command(
            "serve",
            vec![
                search(SetupFor::Analysis),
                crate::analysis::config_rows(),
                crate::analysis::serve::config_rows(),
                log(),
                net(),
                patterns(),
            ],
        ),
        command(
            "selfplay",
            vec![
                search(SetupFor::Other),
                crate::selfplay::config_rows(),
                net(),
            ],
        ),
        command(
            "match",
            vec![
                search(SetupFor::Other),
                crate::play::matches::config_rows(),
                crate::play::matches::match_rows(),
                net(),
                patterns(),
            ],
        ),
        command(
            "gatekeeper",
            vec![
                search(SetupFor::Other),
                crate::play::matches::config_rows(),
                crate::play::matches::gating_rows(),
                net(),
            ],
        ),
        command(
            "benchmark",
            vec![
                search(SetupFor::Benchmark),
                crate::benchmark::config_rows(),
                net(),
            ],
        ),
        command(
            "tune",
            vec![
                vec![crate::setup::NUM_ANALYSIS_THREADS.setting().row()],
                net(),
            ],
        ),
        command("tsumego", vec![search(SetupFor::Gtp), net()]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typo hint (unknown-key warnings) knows every key the tables
    /// declare, so a key the reference lists is never called a typo.
    #[test]
    fn the_typo_hint_knows_every_declared_key() {
        let unknown: Vec<String> = commands()
            .iter()
            .flat_map(|c| c.rows.iter().map(|r| r.key.clone()))
            .filter(|k| !crate::config::is_known_key(k))
            .collect();
        assert!(
            unknown.is_empty(),
            "keys in a table but not in KNOWN_KEYS: {unknown:?}"
        );
    }
}
