//! Life and death (tsumego): frame a local problem, restrict the search to
//! it, and judge the result by the fate of the problem's stones.
//!
//! Front door:
//! - [`TsumegoRequest`]: what a client asks (region, goal, target, ko
//!   threats), parsed by [`parse_goal`], [`parse_ko_threats`] and the
//!   region parsers ([`parse_region_text`], [`parse_region_points`]);
//! - [`prepare`]: resolves the region, decides attacker and goal, builds the
//!   frame ([`build_frame`]) and gives a [`Prepared`] problem: the framed
//!   board and the points the search may play;
//! - [`Prepared::judge`]: from the search's ownership (root and per first
//!   move) and lines, the status of each group in the region, the winning
//!   first moves and the refutations of the wrong ones ([`Verdict`]).
//!
//! Nothing here runs a search: the analysis engine and GTP do, with
//! `allowMoves`' machinery, and hand the report to
//! [`Prepared::judge_snapshot`]. See `docs/tsumego.md`.

mod frame;
mod judge;
mod region;
mod threats;

pub use frame::{build_frame, FrameError, Framed, KoThreat};
pub use judge::{
    group_status, line_has_ko_over, mean_own, region_chains, Goal, GroupVerdict, Status,
};
pub use region::{
    auto_region, parse_point, parse_region_points, parse_region_text, Region, RegionError,
    RegionSpec,
};

use crate::game::{Board, Loc, Move, Player};
use crate::search::AnalysisSnapshot;

/// The goal as asked: `auto` decides from the target and the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoalSpec {
    /// Decide (see [`prepare`]).
    Auto,
    /// This goal.
    Given(Goal),
}

/// Which side the frame gives ko threats to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KoThreats {
    /// Nobody: a ko goes to whoever takes it first.
    None,
    /// The attacker: the frame holds ko threats for it.
    Attacker,
    /// The defender: the frame holds ko threats for it.
    Defender,
}

/// A tsumego problem as a client asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsumegoRequest {
    /// The region.
    pub region: RegionSpec,
    /// The goal.
    pub goal: GoalSpec,
    /// The stone whose group the goal is about, if given.
    pub target: Option<Loc>,
    /// Ko threats in the frame.
    pub ko_threats: KoThreats,
}

/// Why a problem cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TsumegoError {
    /// A bad region.
    #[error(transparent)]
    Region(#[from] RegionError),
    /// No frame fits.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The target point holds no stone, or lies outside the region.
    #[error("target {0} must be a stone inside the region")]
    Target(String),
    /// A text that is no goal.
    #[error("goal must be \"auto\", \"kill\" or \"live\", not {0:?}")]
    Goal(String),
    /// A text that is no ko-threat setting.
    #[error("{0}")]
    KoThreats(String),
}

/// Parses `"auto"`, `"kill"` or `"live"`.
pub fn parse_goal(text: &str) -> Result<GoalSpec, TsumegoError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "auto" => Ok(GoalSpec::Auto),
        "kill" => Ok(GoalSpec::Given(Goal::Kill)),
        "live" => Ok(GoalSpec::Given(Goal::Live)),
        _ => Err(TsumegoError::Goal(text.to_string())),
    }
}

/// Parses `"none"`, `"attacker"` or `"defender"`.
pub fn parse_ko_threats(text: &str) -> Result<KoThreats, TsumegoError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "none" => Ok(KoThreats::None),
        "attacker" => Ok(KoThreats::Attacker),
        "defender" => Ok(KoThreats::Defender),
        _ => Err(TsumegoError::KoThreats(format!(
            "koThreats must be \"none\", \"attacker\" or \"defender\", not {text:?}"
        ))),
    }
}

/// A problem ready to search.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The problem's region.
    pub region: Region,
    /// The framed board.
    pub board: Board,
    /// Points the search may play (plus pass): the region and the outside
    /// liberties of its stones.
    pub playable: Vec<Loc>,
    /// The side that wants the target dead.
    pub attacker: Player,
    /// The goal of the side to move, about the target.
    pub goal: Goal,
    /// The side to move.
    pub to_move: Player,
    /// The stones whose fate decides the goal: the target's chain, else the
    /// defender's largest chain in the region (none if the defender has no
    /// stone there: then the judge looks at the region's points).
    pub target_stones: Vec<Loc>,
    /// The frame's ko threats (`koThreats` other than `"none"`).
    pub threats: Vec<KoThreat>,
}

/// Decides attacker and goal, resolves the region and frames the board.
///
/// The rule:
/// - with a `target`, its colour is the defender; `goal: auto` is `live`
///   when the defender is to move, else `kill`;
/// - without a target, a given goal names the side to move's role (`live`:
///   the side to move defends; `kill`: it attacks);
/// - without either, the side with fewer stones in the region defends
///   (ties: the side not to move, as most problems are "kill"), and the
///   goal follows from who is to move.
pub fn prepare(
    board: &Board,
    to_move: Player,
    komi: f32,
    req: &TsumegoRequest,
) -> Result<Prepared, TsumegoError> {
    let region = Region::resolve(&req.region, board, req.target)?;
    let (xs, ys) = (board.x_size(), board.y_size());
    let target_color = match req.target {
        Some(t) => {
            let text = Move::Play(t).to_gtp(xs, ys);
            let color = board
                .get(t)
                .player()
                .ok_or_else(|| TsumegoError::Target(text.clone()))?;
            if !region.contains(t) {
                return Err(TsumegoError::Target(text));
            }
            Some(color)
        }
        None => None,
    };
    let defender = match (target_color, req.goal) {
        (Some(c), _) => c,
        (None, GoalSpec::Given(Goal::Live)) => to_move,
        (None, GoalSpec::Given(Goal::Kill)) => to_move.opp(),
        (None, GoalSpec::Auto) => {
            let count = |p: Player| {
                region
                    .points()
                    .into_iter()
                    .filter(|&l| board.get(l) == p.color())
                    .count()
            };
            let (mine, theirs) = (count(to_move), count(to_move.opp()));
            if mine < theirs {
                to_move
            } else {
                to_move.opp()
            }
        }
    };
    let goal = match req.goal {
        GoalSpec::Given(g) => g,
        GoalSpec::Auto if defender == to_move => Goal::Live,
        GoalSpec::Auto => Goal::Kill,
    };
    let attacker = defender.opp();
    let target_stones = match req.target {
        Some(t) => board.chain_stones(t).collect(),
        None => region_chains(board, &region)
            .into_iter()
            .filter(|c| c.first().is_some_and(|&l| board.get(l) == defender.color()))
            .max_by_key(|c| c.len())
            .unwrap_or_default(),
    };
    let threats_for = match req.ko_threats {
        KoThreats::None => None,
        KoThreats::Attacker => Some(attacker),
        KoThreats::Defender => Some(attacker.opp()),
    };
    let Framed {
        board: framed,
        playable,
        threats,
    } = build_frame(board, &region, attacker, komi, threats_for)?;
    Ok(Prepared {
        region,
        board: framed,
        playable,
        attacker,
        goal,
        to_move,
        target_stones,
        threats,
    })
}

/// One first move as the search saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveLine {
    /// The move.
    pub mv: Move,
    /// Its principal line, the move first.
    pub pv: Vec<Move>,
    /// Ownership after it (Black's view), if the search kept it.
    pub ownership: Option<Vec<f64>>,
    /// The search's visits to it.
    pub visits: i64,
}

/// The judgement of a searched problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Each group in the region, after the best line.
    pub groups: Vec<GroupVerdict>,
    /// First moves whose outcome meets the goal, best first (among those
    /// with at least a tenth of the top move's visits).
    pub winning_moves: Vec<Move>,
    /// For the best few first moves that miss the goal: their lines.
    pub refutations: Vec<(Move, Vec<Move>)>,
}

/// A first move is judged when it has at least 1/this of the most visited
/// move's visits.
const JUDGED_SHARE: i64 = 10;

/// How many wrong first moves get a refutation line.
const REFUTATIONS: usize = 3;

impl Prepared {
    /// The status of the target after `line`, from `ownership` (Black's
    /// view): the target's stones, or the region's points when the defender
    /// has none there (a "live" problem on an empty area).
    pub fn target_status(&self, ownership: &[f64], line: &[Move]) -> Status {
        let defender = self.attacker.opp();
        if self.target_stones.is_empty() {
            let own = mean_own(
                &self.region.points(),
                defender,
                ownership,
                self.board.x_size(),
            );
            return if own >= judge::SETTLED {
                Status::Alive
            } else if own <= -judge::SETTLED {
                Status::Dead
            } else {
                Status::Unsettled
            };
        }
        let ko = line_has_ko_over(&self.board, self.to_move, line, &self.target_stones);
        group_status(&self.board, &self.target_stones, ownership, ko).status
    }

    /// Judges the search: `root_ownership` and `moves` (in the search's
    /// order, best first) are in Black's view.
    pub fn judge(&self, root_ownership: &[f64], moves: &[MoveLine]) -> Verdict {
        let best_line: &[Move] = moves.first().map_or(&[], |m| &m.pv);
        let groups = region_chains(&self.board, &self.region)
            .into_iter()
            .map(|stones| {
                let ko = line_has_ko_over(&self.board, self.to_move, best_line, &stones);
                group_status(&self.board, &stones, root_ownership, ko)
            })
            .collect();
        let mut winning_moves = Vec::new();
        let mut refutations = Vec::new();
        // A move the search barely tried has an ownership map as shallow as
        // its few visits: it is not judged, and counts as wrong (the search
        // preferred others).
        let top_visits = moves.iter().map(|m| m.visits).max().unwrap_or(0);
        for m in moves {
            let own = m.ownership.as_deref().unwrap_or(root_ownership);
            let judged = m.visits * JUDGED_SHARE >= top_visits;
            if judged && self.goal.met_by(self.target_status(own, &m.pv)) {
                winning_moves.push(m.mv);
            } else if refutations.len() < REFUTATIONS {
                refutations.push((m.mv, m.pv.clone()));
            }
        }
        // A ko threat that also wins (the ko is still there after the
        // answer) is not the problem's answer: playing it while the ko can
        // be taken spends a threat for nothing. Moves of the problem first,
        // each part in the search's order.
        winning_moves.sort_by_key(|&mv| self.is_threat_point(mv));
        Verdict {
            groups,
            winning_moves,
            refutations,
        }
    }

    /// Whether `mv` is one of the frame's ko-threat points.
    pub fn is_threat_point(&self, mv: Move) -> bool {
        let Move::Play(loc) = mv else { return false };
        self.threats.iter().any(|t| t.points.contains(&loc))
    }

    /// Judges a search's report: its ownership (root and per move, which
    /// the caller must have asked the search to keep) and lines, from the
    /// root player's view turned to Black's.
    pub fn judge_snapshot(&self, snap: &AnalysisSnapshot) -> Verdict {
        let (root, moves) = snapshot_lines(snap);
        self.judge(&root, &moves)
    }

    /// The moves the search may play: the playable points and pass.
    pub fn allowed_moves(&self) -> Vec<Move> {
        let mut moves: Vec<Move> = self.playable.iter().map(|&l| Move::Play(l)).collect();
        moves.push(Move::Pass);
        moves
    }

    /// The stones to set up the framed position: `(colour, point)` for
    /// every stone of the framed board.
    pub fn stones(&self) -> Vec<(Player, Loc)> {
        self.board
            .locs()
            .filter_map(|l| self.board.get(l).player().map(|p| (p, l)))
            .collect()
    }
}

/// A search's report as the judge reads it: the root ownership and the
/// visited first moves (symmetric copies left out), in Black's view.
pub fn snapshot_lines(snap: &AnalysisSnapshot) -> (Vec<f64>, Vec<MoveLine>) {
    let to_black = |v: &[f64]| -> Vec<f64> {
        if snap.root_pla == Player::Black {
            v.to_vec()
        } else {
            v.iter().map(|x| -x).collect()
        }
    };
    let root = snap.ownership.as_deref().map(to_black).unwrap_or_default();
    let moves = snap
        .moves
        .iter()
        .filter(|m| m.is_symmetry_of.is_none() && m.visits > 0)
        .map(|m| MoveLine {
            mv: m.mv,
            pv: m.pv.clone(),
            ownership: m.ownership.as_deref().map(to_black),
            visits: m.visits,
        })
        .collect();
    (root, moves)
}

impl Verdict {
    /// The protocol's `"tsumego"` object.
    pub fn to_json(&self, p: &Prepared) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let (xs, ys) = (p.board.x_size(), p.board.y_size());
        let gtp = |m: Move| m.to_gtp(xs, ys);
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|g| {
                json!({
                    "stones": g.stones.iter().map(|&l| gtp(Move::Play(l))).collect::<Vec<_>>(),
                    "color": g.color.letter().to_string(),
                    "status": g.status.name(),
                    "owner": g.owner.letter().to_string(),
                    "mustFindThreats": g.must_find_threats.map(|p| p.letter().to_string()),
                })
            })
            .collect();
        let mut refutations = Map::new();
        for (mv, line) in &self.refutations {
            refutations.insert(
                gtp(*mv),
                Value::from(line.iter().map(|&m| gtp(m)).collect::<Vec<_>>()),
            );
        }
        json!({
            "region": p.region.gtp_points(),
            // What the search was restricted to (pass aside), so a client can
            // give another engine the same restriction (e.g. KataGo's
            // `allowMoves` in scripts/tsumego_bench.py).
            "playable": p.playable.iter().map(|&l| gtp(Move::Play(l))).collect::<Vec<_>>(),
            "attacker": p.attacker.letter().to_string(),
            "goal": p.goal.name(),
            "target": p.target_stones.iter().map(|&l| gtp(Move::Play(l))).collect::<Vec<_>>(),
            "groups": groups,
            "winningMoves": self.winning_moves.iter().map(|&m| gtp(m)).collect::<Vec<_>>(),
            "refutations": refutations,
            "koThreats": p.threats.iter().map(|t| json!({
                "for": t.side.letter().to_string(),
                "points": t.points.iter().map(|&l| gtp(Move::Play(l))).collect::<Vec<_>>(),
                "stones": t.stones.len(),
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Color;

    fn corner(size: usize) -> Board {
        let mut b = Board::new(size, size).unwrap();
        for s in ["A8", "B8", "C8", "C9"] {
            b.set_stone(Loc::parse(s, size, size).unwrap(), Color::Black);
        }
        for s in ["A7", "B7", "C7", "D8", "D9"] {
            b.set_stone(Loc::parse(s, size, size).unwrap(), Color::White);
        }
        b
    }

    #[test]
    fn roles_follow_target_goal_and_stone_counts() {
        let b = corner(9);
        let auto = |target: Option<&str>, goal: GoalSpec, to_move: Player| {
            let req = TsumegoRequest {
                region: RegionSpec::Auto,
                goal,
                target: target.map(|t| Loc::parse(t, 9, 9).unwrap()),
                ko_threats: KoThreats::None,
            };
            let p = prepare(&b, to_move, 7.0, &req).unwrap();
            (p.attacker, p.goal)
        };
        assert_eq!(
            auto(Some("A8"), GoalSpec::Auto, Player::White),
            (Player::White, Goal::Kill)
        );
        assert_eq!(
            auto(Some("A8"), GoalSpec::Auto, Player::Black),
            (Player::White, Goal::Live)
        );
        assert_eq!(
            auto(None, GoalSpec::Given(Goal::Live), Player::Black),
            (Player::White, Goal::Live)
        );
        // Fewer black stones: Black defends.
        assert_eq!(
            auto(None, GoalSpec::Auto, Player::White),
            (Player::White, Goal::Kill)
        );
    }

    #[test]
    fn bad_targets_and_threat_settings_are_errors() {
        let b = corner(9);
        let mut req = TsumegoRequest {
            region: RegionSpec::Auto,
            goal: GoalSpec::Auto,
            target: Loc::parse("E5", 9, 9).ok(),
            ko_threats: KoThreats::None,
        };
        assert!(matches!(
            prepare(&b, Player::Black, 7.0, &req),
            Err(TsumegoError::Target(_))
        ));
        req.target = None;
        // Ko threats need more room than a 9x9 frame has: a frame error.
        req.ko_threats = KoThreats::Attacker;
        assert!(matches!(
            prepare(&b, Player::Black, 7.0, &req),
            Err(TsumegoError::Frame(_))
        ));
        assert!(parse_goal("capture").is_err());
        assert_eq!(parse_goal("Kill").unwrap(), GoalSpec::Given(Goal::Kill));
        assert!(parse_ko_threats("both").is_err());
    }

    #[test]
    fn a_winning_ko_threat_comes_after_the_winning_move_of_the_problem() {
        let mut b = Board::new(19, 19).unwrap();
        let at = |s: &str| Loc::parse(s, 19, 19).unwrap();
        for s in ["A18", "B18", "C18", "C19"] {
            b.set_stone(at(s), Color::Black);
        }
        for s in ["A17", "B17", "C17", "D18", "D19"] {
            b.set_stone(at(s), Color::White);
        }
        let req = TsumegoRequest {
            region: RegionSpec::Auto,
            goal: GoalSpec::Given(Goal::Kill),
            target: Some(at("A18")),
            ko_threats: KoThreats::Attacker,
        };
        let p = prepare(&b, Player::White, 7.0, &req).unwrap();
        let threat = Move::Play(p.threats.first().expect("a ko threat").points[0]);
        let dead = vec![-1.0; 361];
        let line = |mv: Move, visits| MoveLine {
            mv,
            pv: vec![mv],
            ownership: Some(dead.clone()),
            visits,
        };
        let b19 = Move::Play(at("B19"));
        // The search tried the threat most, but both kill.
        let v = p.judge(&dead, &[line(threat, 50), line(b19, 40)]);
        assert_eq!(v.winning_moves, vec![b19, threat]);
    }

    #[test]
    fn judge_sorts_first_moves_into_winning_and_refuted() {
        let b = corner(9);
        let req = TsumegoRequest {
            region: RegionSpec::Auto,
            goal: GoalSpec::Given(Goal::Kill),
            target: Loc::parse("A8", 9, 9).ok(),
            ko_threats: KoThreats::None,
        };
        let p = prepare(&b, Player::White, 7.0, &req).unwrap();
        // Ownership where Black's corner dies, and where it lives.
        let dead = vec![-1.0; 81];
        let mut alive = vec![-1.0; 81];
        for s in ["A8", "B8", "C8", "C9", "A9", "B9"] {
            let (x, y) = Loc::parse(s, 9, 9).unwrap().xy(9);
            alive[y * 9 + x] = 1.0;
        }
        let mv = |s: &str| Move::parse(s, 9, 9).unwrap();
        let moves = vec![
            MoveLine {
                mv: mv("B9"),
                pv: vec![mv("B9")],
                ownership: Some(dead.clone()),
                visits: 50,
            },
            MoveLine {
                mv: mv("A9"),
                pv: vec![mv("A9"), mv("B9")],
                ownership: Some(alive),
                visits: 10,
            },
            // Too few visits to be judged winning: counted as wrong.
            MoveLine {
                mv: mv("C9"),
                pv: vec![mv("C9")],
                ownership: Some(dead.clone()),
                visits: 4,
            },
        ];
        let v = p.judge(&dead, &moves);
        assert_eq!(v.winning_moves, vec![mv("B9")]);
        assert_eq!(
            v.refutations,
            vec![
                (mv("A9"), vec![mv("A9"), mv("B9")]),
                (mv("C9"), vec![mv("C9")])
            ]
        );
        let json = v.to_json(&p);
        assert_eq!(json["winningMoves"][0], "B9");
        assert_eq!(json["refutations"]["A9"][1], "B9");
        assert_eq!(json["attacker"], "W");
        // `playable` is the region plus the outside liberties of its stones:
        // never smaller than the region, and every region point is in it.
        let playable: Vec<&str> = json["playable"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(playable.len(), p.playable.len());
        for r in json["region"].as_array().unwrap() {
            assert!(playable.contains(&r.as_str().unwrap()), "{r} not playable");
        }
        let black_group = v.groups.iter().find(|g| g.color == Player::Black).unwrap();
        assert_eq!(black_group.status, Status::Dead);
    }
}
