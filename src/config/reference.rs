//! The configuration reference (`docs/configuration.md`), written from the
//! settings tables: one line per key with its type, default, range, the
//! commands that read it and whether KataGo has it. The tables belong to
//! the commands (a higher layer), so the command line gathers them
//! (`engine config-reference`) and this module only lays them out.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{katago_has_key, Row, KNOWN_KEYS};

/// The settings one command reads, as reference rows.
#[derive(Debug, Clone)]
pub struct CommandSettings {
    /// The command (`gtp`, `analysis`...).
    pub command: &'static str,
    /// Its settings, one row per key (a key twice: the first row counts).
    pub rows: Vec<Row>,
}

/// The first lines of the file: what it is and how to regenerate it.
const HEADER: &str = "\
# Configuration reference

<!-- Generated from the code's settings tables: do not edit by hand.
Regenerate with `engine config-reference > docs/configuration.md`
(or `ENGINE_BLESS=1 cargo test --release --no-default-features --test config_reference`);
that test fails when this file differs from what the code generates. -->

Every config key a command reads, from the tables the commands read their
settings with (`src/config/setting.rs`: one declaration per key carries its
name, type, default and range). A config is a TOML file or one of KataGo's
`.cfg` files; `-override-config key=value,...` patches it (see
[gtp.md](gtp.md), [analysis.md](analysis.md)).

Columns: **default** is the value when the key is absent (`none`: the
key is optional, or required where its command says so; values that differ
by command name the commands); **read by** names the `engine` commands;
**KataGo** says whether KataGo 1.17.2 reads a key of that name (`no`: the
engine's own key) and, where it was compared, how it behaves; \"not
compared\" means nobody checked the behaviour key by key, not that it
differs. Keys may take a numeric suffix where KataGo allows one (per bot in
match configs: `maxVisits1`; per thread: `cudaDeviceToUseThread0`).
";

/// The reference, in Markdown, for `commands` (in the order given, which
/// is the order of the \"read by\" column).
pub fn render_reference(commands: &[CommandSettings]) -> String {
    // key -> (rows per command, in command order)
    let mut keys: BTreeMap<&str, Vec<(&'static str, &Row)>> = BTreeMap::new();
    for command in commands {
        for row in &command.rows {
            let users = keys.entry(row.key.as_str()).or_default();
            if !users.iter().any(|(c, _)| *c == command.command) {
                users.push((command.command, row));
            }
        }
    }
    let mut out = String::from(HEADER);
    out.push_str("\n## Keys read\n\n");
    out.push_str("| key | type | default | range | read by | KataGo | meaning |\n");
    out.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (key, users) in &keys {
        let first = users[0].1;
        let read_by: Vec<&str> = users.iter().map(|(c, _)| *c).collect();
        let doc = users
            .iter()
            .map(|(_, r)| r.doc.as_str())
            .find(|d| !d.is_empty())
            .unwrap_or("");
        let note = users
            .iter()
            .map(|(_, r)| r.katago.as_str())
            .find(|d| !d.is_empty())
            .unwrap_or("");
        let _ = writeln!(
            out,
            "| `{key}` | {} | {} | {} | {} | {} | {} |",
            cell(&by_command(users, |r| &r.ty)),
            cell(&by_command(users, |r| &r.default)),
            cell(&by_command(users, |r| &r.range)),
            read_by.join(", "),
            cell(&katago_column(key, note)),
            cell(if doc.is_empty() { &first.doc } else { doc }),
        );
    }
    let undeclared: Vec<&str> = KNOWN_KEYS
        .iter()
        .copied()
        .filter(|k| !keys.contains_key(k))
        .collect();
    if !undeclared.is_empty() {
        out.push_str(
            "\n## Keys known but not in a table yet\n\n\
             The typo hint knows these keys (`src/config/known_keys.rs`), but no \
             settings table declares them yet: either a command reads them by hand \
             (not yet moved to a table, so their type, default and commands are not \
             listed here) or no command reads them (KataGo's keys the engine does not \
             implement; a config that sets one gets a warning that it has no effect).\n\n",
        );
        out.push_str("| key | KataGo |\n| --- | --- |\n");
        for key in undeclared {
            let _ = writeln!(out, "| `{key}` | {} |", katago_column(key, ""));
        }
    }
    out
}

/// One value for all commands, or `value (cmd, cmd); other (cmd)` when the
/// commands differ (the search parameters' defaults per program).
fn by_command(users: &[(&'static str, &Row)], field: impl Fn(&Row) -> &String) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (command, row) in users {
        let value = field(row).as_str();
        match groups.iter_mut().find(|(v, _)| *v == value) {
            Some((_, cs)) => cs.push(command),
            None => groups.push((value, vec![command])),
        }
    }
    if groups.len() == 1 {
        return groups[0].0.to_string();
    }
    groups
        .iter()
        .map(|(v, cs)| format!("{v} ({})", cs.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The KataGo column: whether KataGo reads the key, and the note if any.
fn katago_column(key: &str, note: &str) -> String {
    match (katago_has_key(key), note.is_empty()) {
        (false, _) => "no".to_string(),
        (true, true) => "yes (not compared)".to_string(),
        (true, false) => format!("yes: {note}"),
    }
}

/// Text made safe for a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Kind, Setting};

    #[test]
    fn keys_merge_across_commands_and_defaults_name_their_commands() {
        let a = Setting::new(
            "maxVisits",
            Kind::Int {
                default: Some(10),
                range: 1..=100,
            },
        )
        .doc("Most visits.");
        let mut b = a.row();
        b.default = "20".to_string();
        let text = render_reference(&[
            CommandSettings {
                command: "gtp",
                rows: vec![a.row()],
            },
            CommandSettings {
                command: "match",
                rows: vec![b],
            },
        ]);
        assert!(
            text.contains(
                "| `maxVisits` | integer | 10 (gtp); 20 (match) | 1 to 100 | gtp, match | yes (not compared) | Most visits. |"
            ),
            "{text}"
        );
        // Known keys outside every table are listed apart.
        assert!(text.contains("| `rules` | yes (not compared) |"));
    }
}
