//! The arguments of `lz-analyze`, `kata-analyze`, Sabaki's `analyze` and
//! the `*genmove_analyze` commands, parsed as KataGo parses them.

use crate::game::{ByPlayer, Move, Player, MAX_ARR_SIZE};

use crate::numfmt::{parse_bool, parse_finite_f64, parse_i64};

/// Largest interval or time a user may type (KataGo's `MAX_USER_INPUT_TIME`).
pub const MAX_USER_INPUT_TIME: f64 = 1e25;

/// Which command's output format to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalyzeKind {
    /// `lz-analyze` / `lz-genmove_analyze`: Leela Zero's integer format.
    Lz,
    /// `kata-analyze` and the other `kata-*_analyze` commands.
    Kata,
    /// Sabaki's `analyze` / `genmove_analyze`: KataGo's format with every
    /// float printed with a decimal point (`%#g`); only `minmoves`,
    /// `maxmoves`, `interval` and `avoid`/`allow` are accepted.
    Sabaki,
}

impl AnalyzeKind {
    /// The kind of an analysis command name, if it is one.
    pub fn of_command(name: &str) -> Option<AnalyzeKind> {
        match name {
            "lz-analyze" | "lz-genmove_analyze" => Some(AnalyzeKind::Lz),
            "kata-analyze"
            | "kata-genmove_analyze"
            | "kata-search_analyze"
            | "kata-search_analyze_cancellable" => Some(AnalyzeKind::Kata),
            "analyze" | "genmove_analyze" => Some(AnalyzeKind::Sabaki),
            _ => None,
        }
    }
}

/// Moves the search may not play, per player, KataGo-style: for each board
/// array index, the depth (in plies of that player... counted from the root)
/// until which the move is avoided; 0 means allowed. An empty vector means
/// no restriction for that player.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AvoidMoves {
    /// Black's avoid depths by board array index (`Loc::idx`).
    pub black: Vec<i32>,
    /// White's avoid depths by board array index.
    pub white: Vec<i32>,
}

impl AvoidMoves {
    /// Whether nothing is avoided for either player.
    pub fn is_empty(&self) -> bool {
        self.black.iter().chain(self.white.iter()).all(|&d| d <= 0)
    }
}

/// Parsed arguments of an analysis command
/// (`[player] [interval] key value ...`).
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzeArgs {
    /// Output format.
    pub kind: AnalyzeKind,
    /// The player to analyse for, when given (else the player to move).
    pub player: Option<Player>,
    /// Seconds between reports; `None` means no periodic report.
    pub report_interval: Option<f64>,
    /// Report at least this many moves, even with zero visits.
    pub min_moves: usize,
    /// Report at most this many moves.
    pub max_moves: usize,
    /// Print `rootInfo ...`.
    pub root_info: bool,
    /// Print `ownership ...`.
    pub ownership: bool,
    /// Print `ownershipStdev ...`.
    pub ownership_stdev: bool,
    /// Print `movesOwnership ...` for every move.
    pub moves_ownership: bool,
    /// Print `movesOwnershipStdev ...` for every move.
    pub moves_ownership_stdev: bool,
    /// Print `pvVisits ...`.
    pub pv_visits: bool,
    /// Print `pvEdgeVisits ...`.
    pub pv_edge_visits: bool,
    /// Print `noResultValue`.
    pub no_result_value: bool,
    /// `avoid` / `allow` restrictions.
    pub avoid: AvoidMoves,
}

impl AnalyzeArgs {
    /// Defaults for `kind`: no periodic report, every move, no extras.
    pub fn new(kind: AnalyzeKind) -> AnalyzeArgs {
        AnalyzeArgs {
            kind,
            player: None,
            report_interval: None,
            min_moves: 0,
            max_moves: 10_000_000,
            root_info: false,
            ownership: false,
            ownership_stdev: false,
            moves_ownership: false,
            moves_ownership_stdev: false,
            pv_visits: false,
            pv_edge_visits: false,
            no_result_value: false,
            avoid: AvoidMoves::default(),
        }
    }

    /// Whether the search must compute ownership for this output.
    pub fn wants_ownership(&self) -> bool {
        self.ownership || self.ownership_stdev || self.moves_ownership || self.moves_ownership_stdev
    }
}

/// Parses `[player] [interval] key value ...` as KataGo does (the interval
/// is in centiseconds). `x_size`/`y_size` are needed for `avoid`/`allow`
/// vertices. Any unknown key, missing value or bad value fails the whole
/// command, and the error text is KataGo's.
pub fn parse_analyze_args(
    kind: AnalyzeKind,
    command: &str,
    args: &[String],
    x_size: usize,
    y_size: usize,
) -> Result<AnalyzeArgs, String> {
    let fail = || {
        let what = if command.contains("genmove") || command.contains("search") {
            "genmove_analyze"
        } else {
            "analyze"
        };
        format!(
            "Could not parse {what} arguments or arguments out of range: '{}'",
            args.join(" ")
        )
    };
    let parse_interval =
        |s: &str| parse_finite_f64(s).filter(|&v| (0.0..MAX_USER_INPUT_TIME).contains(&v));
    let is_kata = kind == AnalyzeKind::Kata;
    let mut out = AnalyzeArgs::new(kind);
    let mut i = 0;
    if let Some(p) = args.first().and_then(|s| Player::parse(s)) {
        out.player = Some(p);
        i += 1;
    }
    if let Some(cs) = args.get(i).and_then(|s| parse_interval(s)) {
        out.report_interval = Some(cs * 0.01);
        i += 1;
    }
    // (got avoid, got allow) per player, to reject mixing them as KataGo does.
    let mut seen = ByPlayer::both((false, false));
    while i < args.len() {
        let key = args[i].as_str();
        let value = args.get(i + 1).ok_or_else(fail)?.as_str();
        i += 2;
        match key {
            "interval" => {
                out.report_interval = Some(parse_interval(value).ok_or_else(fail)? * 0.01)
            }
            "avoid" | "allow" => {
                let (moves, depth) = match (args.get(i), args.get(i + 1)) {
                    (Some(m), Some(d)) => (m.as_str(), d.as_str()),
                    _ => return Err(fail()),
                };
                i += 2;
                let depth = parse_i64(depth)
                    .filter(|&d| (1..=i32::MAX as i64).contains(&d))
                    .ok_or_else(fail)? as i32;
                let pla = Player::parse(value).ok_or_else(fail)?;
                let mut locs = Vec::new();
                for piece in moves.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let mv = Move::parse(piece, x_size, y_size).map_err(|_| fail())?;
                    locs.push(mv);
                }
                let allow = key == "allow";
                let (got_avoid, got_allow) = &mut seen[pla];
                if *got_allow || (allow && *got_avoid) {
                    return Err(fail());
                }
                *got_avoid |= !allow;
                *got_allow |= allow;
                let table = match pla {
                    Player::Black => &mut out.avoid.black,
                    Player::White => &mut out.avoid.white,
                };
                table.resize(MAX_ARR_SIZE, 0);
                if allow {
                    table.iter_mut().for_each(|d| *d = depth);
                }
                for mv in locs {
                    // A pass has no board index; KataGo files it under the
                    // pass location, which the search never avoids by table.
                    if let Some(loc) = mv.loc() {
                        table[loc.idx()] = if allow { 0 } else { depth };
                    }
                }
            }
            "minmoves" => {
                out.min_moves = parse_i64(value)
                    .filter(|&n| (0..1_000_000_000).contains(&n))
                    .ok_or_else(fail)? as usize
            }
            "maxmoves" => {
                out.max_moves = parse_i64(value)
                    .filter(|&n| (0..1_000_000_000).contains(&n))
                    .ok_or_else(fail)? as usize
            }
            _ if is_kata => {
                let flag = parse_bool(value).ok_or_else(fail)?;
                match key {
                    "rootInfo" => out.root_info = flag,
                    "ownership" => out.ownership = flag,
                    "ownershipStdev" => out.ownership_stdev = flag,
                    "movesOwnership" => out.moves_ownership = flag,
                    "movesOwnershipStdev" => out.moves_ownership_stdev = flag,
                    "pvVisits" => out.pv_visits = flag,
                    "pvEdgeVisits" => out.pv_edge_visits = flag,
                    "noResultValue" => out.no_result_value = flag,
                    _ => return Err(fail()),
                }
            }
            _ => return Err(fail()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn mv(gtp: &str) -> Move {
        Move::parse(gtp, 19, 19).unwrap()
    }

    #[test]
    fn player_and_interval_are_optional_positional_args() {
        let a = parse_analyze_args(AnalyzeKind::Kata, "kata-analyze", &s(&["b", "50"]), 19, 19)
            .unwrap();
        assert_eq!(a.player, Some(Player::Black));
        assert_eq!(a.report_interval, Some(0.5));
        let a = parse_analyze_args(AnalyzeKind::Lz, "lz-analyze", &s(&["10"]), 19, 19).unwrap();
        assert_eq!(a.player, None);
        assert_eq!(a.report_interval, Some(0.1));
        let a = parse_analyze_args(
            AnalyzeKind::Kata,
            "kata-analyze",
            &s(&[
                "interval",
                "10",
                "ownership",
                "true",
                "rootInfo",
                "TRUE",
                "pvVisits",
                "false",
            ]),
            19,
            19,
        )
        .unwrap();
        assert_eq!(a.report_interval, Some(0.1));
        assert!(a.ownership && a.root_info && !a.pv_visits);
        assert!(a.wants_ownership());
        let a = parse_analyze_args(AnalyzeKind::Lz, "lz-analyze", &[], 9, 9).unwrap();
        assert_eq!(a.report_interval, None);
    }

    #[test]
    fn bad_arguments_fail_with_katago_text() {
        for bad in [
            &["interval"][..],
            &["interval", "-1"],
            &["ownership", "true"], // kata-only key in lz
            &["minmoves", "x"],
            &["bogus", "1"],
        ] {
            let e = parse_analyze_args(AnalyzeKind::Lz, "lz-analyze", &s(bad), 19, 19).unwrap_err();
            assert!(e.starts_with("Could not parse analyze arguments"), "{e}");
        }
        let e = parse_analyze_args(
            AnalyzeKind::Kata,
            "kata-genmove_analyze",
            &s(&["ownership", "yes"]),
            19,
            19,
        )
        .unwrap_err();
        assert!(
            e.starts_with("Could not parse genmove_analyze arguments"),
            "{e}"
        );
    }

    #[test]
    fn avoid_and_allow_build_katago_tables() {
        let a = parse_analyze_args(
            AnalyzeKind::Kata,
            "kata-analyze",
            &s(&[
                "avoid", "b", "D4,Q16", "10", "avoid", "w", "pass", "1", "minmoves", "3",
            ]),
            19,
            19,
        )
        .unwrap();
        assert_eq!(a.avoid.black.len(), MAX_ARR_SIZE);
        assert_eq!(a.avoid.black[mv("D4").loc().unwrap().idx()], 10);
        assert_eq!(a.avoid.black[mv("Q16").loc().unwrap().idx()], 10);
        assert_eq!(a.avoid.black[mv("Q4").loc().unwrap().idx()], 0);
        assert_eq!(a.min_moves, 3);
        let a = parse_analyze_args(
            AnalyzeKind::Kata,
            "kata-analyze",
            &s(&["allow", "w", "C3", "2"]),
            19,
            19,
        )
        .unwrap();
        assert_eq!(a.avoid.white[mv("C3").loc().unwrap().idx()], 0);
        assert_eq!(a.avoid.white[mv("D4").loc().unwrap().idx()], 2);
        assert!(a.avoid.black.is_empty());
        // allow after avoid for the same player, a zero depth, a bad vertex.
        for bad in [
            &["avoid", "b", "D4", "1", "allow", "b", "C3", "1"][..],
            &["avoid", "b", "D4", "0"],
            &["avoid", "b", "Z99", "1"],
            &["avoid", "x", "D4", "1"],
            &["avoid", "b", "D4"],
        ] {
            assert!(
                parse_analyze_args(AnalyzeKind::Kata, "kata-analyze", &s(bad), 19, 19).is_err()
            );
        }
    }
}
