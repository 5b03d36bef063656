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
                net(),
                patterns(),
            ],
        ),
        command(
            "gatekeeper",
            vec![
                search(SetupFor::Other),
                crate::play::matches::config_rows(),
                net(),
            ],
        ),
        command("benchmark", vec![search(SetupFor::Benchmark), net()]),
        command("tune", vec![net()]),
        command("tsumego", vec![search(SetupFor::Gtp), net()]),
    ]
}
