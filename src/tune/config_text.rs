//! The config `engine tune` writes: the starting config's text with the
//! chosen keys set, read back before it is written whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::candidates::Value;
use crate::config::Config;

/// Whether `line` sets `key` (`key = ...`, spaces allowed); with
/// `commented`, a commented-out `# key = ...` line instead.
pub(super) fn line_sets(line: &str, key: &str, commented: bool) -> bool {
    let mut rest = line.trim_start();
    if commented {
        let Some(r) = rest.strip_prefix('#') else {
            return false;
        };
        rest = r.trim_start_matches(['#', ' ', '\t']);
    }
    rest.strip_prefix(key)
        .is_some_and(|r| r.trim_start().starts_with('='))
}

/// `text` with each of `settings` set: on the key's own line, else on its
/// first commented-out line, else appended at the end; `header` goes on
/// top as comment lines. A pure function of its inputs.
pub(super) fn set_keys(
    text: &str,
    toml: bool,
    settings: &[(&str, Value)],
    header: &[String],
) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut appended = Vec::new();
    for (key, value) in settings {
        let new_line = format!("{key} = {}  # engine tune", value.text(toml));
        let at = lines
            .iter()
            .position(|l| line_sets(l, key, false))
            .or_else(|| lines.iter().position(|l| line_sets(l, key, true)));
        match at {
            Some(i) => {
                let indent: String = lines[i].chars().take_while(|c| c.is_whitespace()).collect();
                lines[i] = format!("{indent}{new_line}");
            }
            None => appended.push(new_line),
        }
    }
    let mut out = String::new();
    for h in header {
        out.push_str(&format!("# {h}\n"));
    }
    out.push('\n');
    for l in &lines {
        out.push_str(l);
        out.push('\n');
    }
    if !appended.is_empty() {
        out.push_str("\n# Set by engine tune (keys the config did not have).\n");
        for l in appended {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// Reads `text` back as a config and checks that it gives `settings`.
pub(super) fn check_written(
    text: &str,
    toml: bool,
    settings: &[(&str, Value)],
) -> Result<(), String> {
    let cfg = if toml {
        Config::from_toml_str(text, "the tuned config")
    } else {
        Config::from_cfg_str(text, "the tuned config")
    }
    .map_err(|e| format!("the tuned config does not read back: {e}"))?;
    let mut got = BTreeMap::new();
    for (key, value) in settings {
        let ok = match value {
            Value::Int(n) => cfg.get_i64(key, i64::MIN..=i64::MAX).ok() == Some(*n),
            Value::Word(w) => cfg.get_string(key).ok().as_deref() == Some(*w),
        };
        got.insert(*key, ok);
    }
    match got.iter().find(|(_, ok)| !**ok) {
        Some((key, _)) => Err(format!(
            "the tuned config does not read back {key} as set (is the key in a string or \
             twice in the starting config?)"
        )),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` whole or not at all.
pub(super) fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("-output {}: not a file name", path.display()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = std::path::absolute(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let store = crate::store::Store::open_path(&dir).map_err(|e| e.to_string())?;
    store
        .put(name, bytes.to_vec())
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_replace_their_lines_or_commented_lines_or_are_appended() {
        let text = "[threads]\n# numSearchThreads = 2\n\n[network]\n  nnMaxBatchSize = 8 # old\nnnCacheSizePowerOfTwo = 20\n";
        let settings = [
            ("numSearchThreads", Value::Int(4)),
            ("nnMaxBatchSize", Value::Int(2)),
            ("nnCpuBackend", Value::Word("rust")),
        ];
        let out = set_keys(text, true, &settings, &["made here".to_string()]);
        assert_eq!(
            out,
            "# made here\n\n[threads]\nnumSearchThreads = 4  # engine tune\n\n[network]\n  \
             nnMaxBatchSize = 2  # engine tune\nnnCacheSizePowerOfTwo = 20\n\n# Set by engine \
             tune (keys the config did not have).\nnnCpuBackend = \"rust\"  # engine tune\n"
        );
        check_written(&out, true, &settings).unwrap();
        let cfg = Config::from_toml_str(&out, "t").unwrap();
        assert_eq!(cfg.get_i64("nnCacheSizePowerOfTwo", 0..=30).unwrap(), 20);
    }

    #[test]
    fn a_katago_cfg_keeps_its_format() {
        let text = "numSearchThreads = 6\n# nnMaxBatchSize = 12\nmaxVisits = 500\n";
        let settings = [
            ("nnCpuBackend", Value::Word("libtorch")),
            ("numSearchThreads", Value::Int(1)),
            ("nnMaxBatchSize", Value::Int(1)),
        ];
        let out = set_keys(text, false, &settings, &[]);
        assert!(
            out.contains("nnCpuBackend = libtorch  # engine tune"),
            "{out}"
        );
        check_written(&out, false, &settings).unwrap();
        let cfg = Config::from_cfg_str(&out, "t").unwrap();
        assert_eq!(cfg.get_i64("maxVisits", 0..=1000).unwrap(), 500);
    }

    #[test]
    fn a_key_that_does_not_read_back_is_refused() {
        // numSearchThreadsX = ... is not numSearchThreads; the key set on
        // a line inside a multi-line string would not read back either.
        let text = "x = \"\"\"\nnumSearchThreads = 3\n\"\"\"\n";
        let settings = [("numSearchThreads", Value::Int(4))];
        let out = set_keys(text, true, &settings, &[]);
        assert!(check_written(&out, true, &settings).is_err());
        assert!(!line_sets(
            "numSearchThreadsX = 1",
            "numSearchThreads",
            false
        ));
        assert!(line_sets(
            "  ## numSearchThreads= 1",
            "numSearchThreads",
            true
        ));
    }
}
