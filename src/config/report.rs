//! The start-up report on a config's keys, the same for every command: keys
//! no command knows (typos, mostly, with the nearest known key as a hint:
//! `maxVisitz` → `maxVisits`) and keys the command knows of but did not
//! read (an option of another command, or one this engine does not
//! implement). It is built after the command has read everything it uses,
//! from the record of keys read that [`Config`]'s getters keep.

use super::Config;

/// What a command knows as config keys: the keys it reads or that belong to
/// the program family, checked after trailing digits are stripped (per-bot
/// and per-thread suffixes such as `maxVisits1`).
#[derive(Debug, Clone, Copy)]
pub struct Vocabulary<'a> {
    keys: &'a [&'a str],
}

impl<'a> Vocabulary<'a> {
    /// The keys of `keys` (any order).
    pub const fn new(keys: &'a [&'a str]) -> Vocabulary<'a> {
        Vocabulary { keys }
    }

    /// Whether `key` is in the vocabulary, directly or with a numeric suffix.
    pub fn contains(&self, key: &str) -> bool {
        if self.keys.contains(&key) {
            return true;
        }
        let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
        base.len() < key.len() && self.keys.contains(&base)
    }

    /// The known key closest to `key` by edit distance (ignoring case and a
    /// numeric suffix), if close enough to be a typo of it.
    pub fn nearest(&self, key: &str) -> Option<&'a str> {
        let base = key
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .to_lowercase();
        self.keys
            .iter()
            .map(|k| (edit_distance(&base, &k.to_lowercase()), *k))
            .filter(|(d, k)| *d <= 3.max(k.len() / 4).min(k.len() / 2))
            .min_by_key(|(d, _)| *d)
            .map(|(_, k)| k)
    }
}

/// One key the report is about.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyProblem {
    /// A key outside the vocabulary, with the nearest known key if any.
    Unknown {
        /// The key as written.
        key: String,
        /// Where it was set (file and line, or `-override-config`).
        origin: String,
        /// The known key it is probably a typo of.
        hint: Option<String>,
    },
    /// A known key the command did not read.
    Unused {
        /// The key as written.
        key: String,
        /// Where it was set.
        origin: String,
    },
}

/// The report on a config's keys for one command.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyReport {
    /// The command, as the lines name it (`engine gtp`).
    pub command: String,
    /// One entry per problem key, in key order.
    pub problems: Vec<KeyProblem>,
}

impl KeyReport {
    /// No unknown or unused key.
    pub fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }

    /// The keys outside the vocabulary.
    pub fn unknown(&self) -> Vec<&str> {
        self.problems
            .iter()
            .filter_map(|p| match p {
                KeyProblem::Unknown { key, .. } => Some(key.as_str()),
                KeyProblem::Unused { .. } => None,
            })
            .collect()
    }

    /// One `WARNING:` line per problem key (none when there is none).
    pub fn lines(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|p| match p {
                KeyProblem::Unknown { key, origin, hint } => {
                    let hint = hint
                        .as_ref()
                        .map_or(String::new(), |h| format!(" (did you mean '{h}'?)"));
                    format!(
                        "WARNING: unknown config key '{key}' in {origin}{hint}: it has no effect"
                    )
                }
                KeyProblem::Unused { key, origin } => format!(
                    "WARNING: config key '{key}' in {origin} is not used by {}: it has no effect",
                    self.command
                ),
            })
            .collect()
    }
}

impl Config {
    /// The report on this config's keys for `command`, given what it knows:
    /// call it once the command has read every key it uses.
    pub fn key_report(&self, command: &str, known: Vocabulary<'_>) -> KeyReport {
        let problems = self
            .unused_keys()
            .into_iter()
            .map(|key| {
                let origin = self.origin_of(&key);
                if known.contains(&key) {
                    KeyProblem::Unused { key, origin }
                } else {
                    let hint = known.nearest(&key).map(str::to_string);
                    KeyProblem::Unknown { key, origin, hint }
                }
            })
            .collect();
        KeyReport {
            command: command.to_string(),
            problems,
        }
    }
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::KNOWN_KEYS;

    const KATAGO: Vocabulary<'static> = Vocabulary::new(KNOWN_KEYS);

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("maxvisitz", "maxvisits"), 1);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn typos_get_the_nearest_key_and_junk_gets_none() {
        assert_eq!(KATAGO.nearest("maxVisitz"), Some("maxVisits"));
        assert_eq!(KATAGO.nearest("numsearchthreads"), Some("numSearchThreads"));
        assert_eq!(KATAGO.nearest("maxVisitz1"), Some("maxVisits"));
        assert_eq!(KATAGO.nearest("qqqqqqqqqqqqqqqq"), None);
        assert_eq!(KATAGO.nearest("ab"), None);
    }

    /// Unread keys are reported: unknown ones with a hint and their origin
    /// (file line or override), known ones as unused by the command; read
    /// keys and suffixed known keys are not unknown.
    #[test]
    fn report_names_unknown_and_unused_keys_with_their_origin() {
        let mut cfg = Config::from_toml_str(
            "maxVisits = 10\nmaxVisitz = 5\nlogDir = \"x\"\nmaxVisits1 = 3\n",
            "t.toml",
        )
        .unwrap();
        cfg.apply_overrides("numSearchThreadz=2").unwrap();
        cfg.get_i64("maxVisits", 1..=100).unwrap();
        let report = cfg.key_report("engine gtp", KATAGO);
        assert_eq!(report.unknown(), vec!["maxVisitz", "numSearchThreadz"]);
        let lines = report.lines();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines.iter().any(|l| l
            == "WARNING: config key 'logDir' in config file 't.toml', line 3 is not used by engine gtp: it has no effect"));
        assert!(lines.iter().any(|l| l
            == "WARNING: unknown config key 'maxVisitz' in config file 't.toml', line 2 (did you mean 'maxVisits'?): it has no effect"));
        assert!(lines.iter().any(|l| l
            == "WARNING: unknown config key 'numSearchThreadz' in -override-config (did you mean 'numSearchThreads'?): it has no effect"));
        assert!(lines
            .iter()
            .any(|l| l.contains("'maxVisits1'") && l.contains("not used")));
        // Once read, a key leaves the report.
        cfg.mark_used("logDir");
        assert_eq!(cfg.key_report("engine gtp", KATAGO).lines().len(), 3);
    }

    #[test]
    fn an_own_vocabulary_judges_known_keys() {
        let cfg = Config::from_toml_str("modelKnd = 1\nmaxVisits = 2\n", "l.toml").unwrap();
        let report = cfg.key_report("engine learn", Vocabulary::new(&["modelKind"]));
        assert_eq!(report.unknown(), vec!["maxVisits", "modelKnd"]);
        assert!(report.lines()[1].contains("(did you mean 'modelKind'?)"));
    }
}
