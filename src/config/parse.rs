//! Turning config text into key/value entries: TOML files, KataGo's own
//! `.cfg` format, and `-override-config` arguments.
//!
//! All three end up as one flat map from KataGo key to a TOML value. Values
//! written without types (`.cfg` lines, overrides) are typed by TOML's rules
//! (`500` is an integer, `0.5` a float, `true` a boolean, anything else a
//! string) and keep their raw text, so that a string getter returns exactly
//! what the user wrote.

use std::collections::BTreeMap;

use super::ConfigError;

/// Where a value came from, for error messages.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Origin {
    /// A config file, with the 1-based line when known.
    File { line: Option<usize> },
    /// `-override-config` (or [`super::Config::set`]).
    Override,
}

/// One key's value.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Entry {
    /// The typed value.
    pub value: toml::Value,
    /// The text as written, for untyped sources (`.cfg`, overrides).
    pub raw: Option<String>,
    /// Where it came from.
    pub origin: Origin,
}

/// Types a bare value by TOML's rules, leniently: KataGo accepts `True`
/// and `.5`, so we do too. Anything that is not a scalar stays a string.
pub(super) fn type_scalar(raw: &str) -> toml::Value {
    let raw = raw.trim();
    if raw.is_empty() || raw.contains(['\n', '\r']) {
        return toml::Value::String(raw.to_string());
    }
    if let Ok(mut table) = format!("v = {raw}").parse::<toml::Table>() {
        if let Some(v) = table.remove("v") {
            match v {
                toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                    return v
                }
                // A quoted string: the user's quotes are not part of the value.
                toml::Value::String(_) => return v,
                _ => {}
            }
        }
    }
    match raw.to_ascii_lowercase().as_str() {
        "true" => return toml::Value::Boolean(true),
        "false" => return toml::Value::Boolean(false),
        _ => {}
    }
    // Forms TOML rejects but C++'s strtod (and so KataGo) accepts: `.5`, `5.`.
    if raw
        .bytes()
        .all(|b| b.is_ascii_digit() || b".+-eE".contains(&b))
    {
        if let Ok(x) = raw.parse::<f64>() {
            return toml::Value::Float(x);
        }
    }
    toml::Value::String(raw.to_string())
}

/// Parses a TOML config. Sections only group keys for the reader: they are
/// flattened into one namespace, as KataGo's keys are unique.
pub(super) fn parse_toml(text: &str, file: &str) -> Result<BTreeMap<String, Entry>, ConfigError> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(0);
        ConfigError::Syntax {
            file: file.to_string(),
            line,
            message: e.message().to_string(),
        }
    })?;
    let mut out = BTreeMap::new();
    flatten(table, text, file, &mut out)?;
    Ok(out)
}

fn flatten(
    table: toml::Table,
    text: &str,
    file: &str,
    out: &mut BTreeMap<String, Entry>,
) -> Result<(), ConfigError> {
    for (key, value) in table {
        if let toml::Value::Table(sub) = value {
            flatten(sub, text, file, out)?;
            continue;
        }
        let line = find_key_line(text, &key);
        if out.contains_key(&key) {
            return Err(ConfigError::DuplicateKey {
                key,
                file: file.to_string(),
                line: line.unwrap_or(0),
            });
        }
        out.insert(
            key,
            Entry {
                value,
                raw: None,
                origin: Origin::File { line },
            },
        );
    }
    Ok(())
}

/// The line where `key = ...` is written; the TOML parser keeps no spans for
/// a generic table, and a line number is what users need in messages. With a
/// duplicate this finds the last occurrence, the one that is reported.
fn find_key_line(text: &str, key: &str) -> Option<usize> {
    let mut found = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let rest = t
            .strip_prefix(key)
            .or_else(|| t.strip_prefix(&format!("\"{key}\"")[..]));
        if let Some(rest) = rest {
            if rest.trim_start().starts_with('=') {
                found = Some(i + 1);
            }
        }
    }
    found
}

/// Parses KataGo's `.cfg` format: `key = value` lines, `#` comments (also
/// after a value), optional double quotes with `\` escapes.
pub(super) fn parse_cfg(text: &str, file: &str) -> Result<BTreeMap<String, Entry>, ConfigError> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let syntax = |message: &str| ConfigError::Syntax {
            file: file.to_string(),
            line: line_no,
            message: message.to_string(),
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('@') {
            return Err(syntax(
                "@ directives (@include) are not supported; copy the included keys into this file",
            ));
        }
        let key_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(line.len());
        let key = &line[..key_end];
        if key.is_empty() {
            return Err(syntax("could not parse key value pair: expected a key"));
        }
        let rest = line[key_end..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            return Err(syntax(&format!(
                "could not parse key value pair: expected '=' after key '{key}'"
            )));
        };
        let rest = rest.trim_start();
        let raw = if let Some(quoted) = rest.strip_prefix('"') {
            let (value, after) = unquote(quoted).ok_or_else(|| {
                syntax("could not parse key value pair: unterminated double quote")
            })?;
            let after = after.trim_start();
            if !(after.is_empty() || after.starts_with('#')) {
                return Err(syntax(
                    "could not parse key value pair: text after closing double quote",
                ));
            }
            value
        } else {
            rest.split('#').next().unwrap_or("").trim().to_string()
        };
        if raw.is_empty() {
            return Err(syntax(&format!(
                "could not parse key value pair: no value for key '{key}'"
            )));
        }
        if out.contains_key(key) {
            return Err(ConfigError::DuplicateKey {
                key: key.to_string(),
                file: file.to_string(),
                line: line_no,
            });
        }
        // Quoted values are strings whatever they look like.
        let value = if rest.starts_with('"') {
            toml::Value::String(raw.clone())
        } else {
            type_scalar(&raw)
        };
        out.insert(
            key.to_string(),
            Entry {
                value,
                raw: Some(raw),
                origin: Origin::File {
                    line: Some(line_no),
                },
            },
        );
    }
    Ok(out)
}

/// `text` split at the commas outside double quotes (a backslash escapes
/// the next character inside them); an unclosed quote is an error.
fn split_outside_quotes(text: &str) -> Result<Vec<&str>, ConfigError> {
    let mut pieces = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                pieces.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(ConfigError::Override {
            text: text[start..].trim().to_string(),
            message: "a quote is not closed".to_string(),
        });
    }
    pieces.push(&text[start..]);
    Ok(pieces)
}

/// Reads a double-quoted string body (after the opening quote); returns the
/// unescaped value and the text after the closing quote.
fn unquote(s: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => value.push(chars.next()?.1),
            '"' => return Some((value, &s[i + 1..])),
            _ => value.push(c),
        }
    }
    None
}

/// Parses a `-override-config` argument: `key=value, key2=value2`. An empty
/// value (`key=`) means "delete the key", as in KataGo (`None` here).
/// Values are typed by TOML's rules; quotes are optional for strings, and
/// a quoted value may hold commas (`bSizes="9,13"`), which KataGo's
/// overrides cannot.
pub fn parse_overrides(text: &str) -> Result<Vec<(String, Option<toml::Value>)>, ConfigError> {
    let mut out: Vec<(String, Option<toml::Value>)> = Vec::new();
    for piece in split_outside_quotes(text)? {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let err = |message: &str| ConfigError::Override {
            text: piece.to_string(),
            message: message.to_string(),
        };
        let Some((key, value)) = piece.split_once('=') else {
            return Err(err("expected key=value"));
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(err("the key must be letters, digits, '_' or '-'"));
        }
        let value = value.trim();
        let value = if value.is_empty() {
            None
        } else {
            Some(type_scalar(value))
        };
        // The last of repeated keys wins, as with KataGo's map.
        out.retain(|(k, _)| k != key);
        out.push((key.to_string(), value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::Value;

    #[test]
    fn scalars_are_typed_by_toml_rules() {
        assert_eq!(type_scalar("500"), Value::Integer(500));
        assert_eq!(type_scalar("-3"), Value::Integer(-3));
        assert_eq!(type_scalar("0.5"), Value::Float(0.5));
        assert_eq!(type_scalar("1e6"), Value::Float(1e6));
        assert_eq!(type_scalar(".5"), Value::Float(0.5));
        assert_eq!(type_scalar("true"), Value::Boolean(true));
        assert_eq!(type_scalar("False"), Value::Boolean(false));
        assert_eq!(type_scalar("japanese"), Value::String("japanese".into()));
        assert_eq!(type_scalar("\"a b\""), Value::String("a b".into()));
        assert_eq!(
            type_scalar("tromp-taylor"),
            Value::String("tromp-taylor".into())
        );
        assert_eq!(type_scalar("9,13,19"), Value::String("9,13,19".into()));
        assert_eq!(type_scalar("[1, 2]"), Value::String("[1, 2]".into()));
    }

    #[test]
    fn cfg_lines_comments_and_quotes() {
        let text = "# header\n\nmaxVisits = 500 # trailing\nrules=japanese\n  logFile = \"a # b\\\"c\" # c\nnumSearchThreads 	=	 2\n";
        let m = parse_cfg(text, "t.cfg").unwrap();
        assert_eq!(m["maxVisits"].value, Value::Integer(500));
        assert_eq!(m["maxVisits"].raw.as_deref(), Some("500"));
        assert_eq!(m["maxVisits"].origin, Origin::File { line: Some(3) });
        assert_eq!(m["rules"].value, Value::String("japanese".into()));
        assert_eq!(m["logFile"].value, Value::String("a # b\"c".into()));
        assert_eq!(m["numSearchThreads"].value, Value::Integer(2));
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn cfg_errors_have_lines() {
        let bad = |t: &str| match parse_cfg(t, "f.cfg") {
            Err(ConfigError::Syntax { line, .. }) => line,
            Err(ConfigError::DuplicateKey { line, .. }) => line + 1000,
            other => panic!("expected an error for {t:?}, got {other:?}"),
        };
        assert_eq!(bad("a = 1\nb 2\n"), 2);
        assert_eq!(bad("a =\n"), 1);
        assert_eq!(bad("a = \"x\n"), 1);
        assert_eq!(bad("a = \"x\" y\n"), 1);
        assert_eq!(bad("= 3\n"), 1);
        assert_eq!(bad("@include other.cfg\n"), 1);
        assert_eq!(bad("a = 1\n\na = 2\n"), 1003);
    }

    #[test]
    fn toml_sections_flatten_and_duplicates_fail() {
        let m = parse_toml(
            "maxVisits = 10\n[search]\ncpuctExploration = 1.0\n[rules]\nkoRule = \"SIMPLE\"\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(m["cpuctExploration"].value, Value::Float(1.0));
        assert_eq!(m["koRule"].origin, Origin::File { line: Some(5) });
        let err = parse_toml("a = 1\n[x]\na = 2\n", "t.toml").unwrap_err();
        assert!(
            matches!(err, ConfigError::DuplicateKey { ref key, line: 3, .. } if key == "a"),
            "{err}"
        );
    }

    #[test]
    fn toml_syntax_error_has_line() {
        let err = parse_toml("a = 1\nb = \n", "t.toml").unwrap_err();
        assert!(
            matches!(err, ConfigError::Syntax { line: 2, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn overrides_typed_and_deletions() {
        let o =
            parse_overrides("maxVisits=100, rules = japanese ,x=\"a b\",y=,maxVisits=7").unwrap();
        assert_eq!(
            o,
            vec![
                ("rules".to_string(), Some(Value::String("japanese".into()))),
                ("x".to_string(), Some(Value::String("a b".into()))),
                ("y".to_string(), None),
                ("maxVisits".to_string(), Some(Value::Integer(7))),
            ]
        );
        assert!(parse_overrides("").unwrap().is_empty());
        // A quoted value keeps its commas (and an escaped quote).
        assert_eq!(
            parse_overrides("bSizes=\"9,13\",bSizeRelProbs = \"3, 1\",s=\"a\\\",b\",n=2").unwrap(),
            vec![
                ("bSizes".to_string(), Some(Value::String("9,13".into()))),
                (
                    "bSizeRelProbs".to_string(),
                    Some(Value::String("3, 1".into()))
                ),
                ("s".to_string(), Some(Value::String("a\",b".into()))),
                ("n".to_string(), Some(Value::Integer(2))),
            ]
        );
        assert!(matches!(
            parse_overrides("bSizes=\"9,13"),
            Err(ConfigError::Override { .. })
        ));
        assert!(matches!(
            parse_overrides("maxVisits"),
            Err(ConfigError::Override { .. })
        ));
        assert!(matches!(
            parse_overrides("=3"),
            Err(ConfigError::Override { .. })
        ));
    }
}
