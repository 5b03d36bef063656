//! `engine tsumego PROBLEM.sgf`: solves a life-and-death problem given as
//! SGF and writes the solution tree back as SGF.
//!
//! The problem is the SGF's setup stones (`AB`/`AW`); the side to play is
//! `PL`, else the colour of the first move, else Black. Moves already in
//! the file (often a solution tree) are ignored. The position is framed and
//! searched as the analysis protocol's `tsumego` field does (see
//! [`crate::tsumego`]), and the answer is one SGF game: the problem's
//! setup, then one variation per winning first move with its main line
//! (`TE[1]`), then one per refuted first move with the refutation (`BM[1]`).
//! First moves carry the target's status, the winrate and the visits;
//! later moves of a line carry their visits in the search.

use std::path::PathBuf;

use clap::Args;

use crate::game::sgf::{parse_collection, GameRecord, NodeId, SgfNode, SgfTree};
use crate::game::{Board, Color, GameOptions, GameState, Loc, Move, Player, Rules};
use crate::search::{
    AnalysisSnapshot, MoveInfo, RunOptions, Search, SearchParams, SetupFor, SnapshotRequest,
};
use crate::setup::ConfigArgs;
use crate::tsumego::{self, Prepared, TsumegoRequest};

/// Flags of `engine tsumego`.
#[derive(Debug, Args)]
pub struct TsumegoArgs {
    /// The problem: an SGF file whose setup stones (`AB`/`AW`) hold it;
    /// `PL` (or the first move's colour) says who plays.
    pub problem: PathBuf,
    /// KataGo network file (default: the project's net in `models/`).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// `-config` (default: the built-in `configs/gtp.toml`) and
    /// `-override-config`.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Visits of the search (default: the config's `maxVisits`).
    #[arg(long)]
    pub visits: Option<i64>,
    /// The problem's region: `auto`, a rectangle `A14-H19`, or points
    /// joined by commas.
    #[arg(long, default_value = "auto")]
    pub region: String,
    /// What the side to play wants: `auto`, `kill` or `live`.
    #[arg(long, default_value = "auto")]
    pub goal: String,
    /// A stone of the group the goal is about.
    #[arg(long)]
    pub target: Option<String>,
    /// Which side the frame gives ko threats to: `none`, `attacker` or
    /// `defender` (the winner of a ko then follows from it).
    #[arg(long = "ko-threats", default_value = "none")]
    pub ko_threats: String,
    /// Write the solution here instead of stdout.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

/// Why `engine tsumego` stopped.
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// Bad flags, an unreadable or bad SGF, a problem that cannot be framed.
    #[error("{0}")]
    Input(String),
    /// The net, the search or the output failed.
    #[error("{0}")]
    Run(String),
}

impl SolveError {
    /// Bad input is a usage failure (as clap's errors); the rest a
    /// failure while running.
    pub fn failure(&self) -> crate::exit::Failure {
        match self {
            SolveError::Input(_) => crate::exit::Failure::Usage,
            SolveError::Run(_) => crate::exit::Failure::Runtime,
        }
    }
}

/// Runs `engine tsumego`.
pub fn run(args: &TsumegoArgs) -> crate::exit::CommandResult {
    run_inner(args)
        .map(|()| crate::exit::Exit::Success)
        .map_err(|e| crate::exit::CommandError::new(e.failure(), e))
}

/// Longest line written after a winning first move (the move included).
const MAIN_LINE: usize = 12;
/// Longest refutation written (the wrong move included).
const REFUTATION_LINE: usize = 6;
/// Komi when the SGF has none.
const DEFAULT_KOMI: f32 = 7.5;

fn run_inner(args: &TsumegoArgs) -> Result<(), SolveError> {
    let input = |e: &dyn std::fmt::Display| SolveError::Input(e.to_string());
    let text = std::fs::read_to_string(&args.problem)
        .map_err(|e| SolveError::Input(format!("reading {}: {e}", args.problem.display())))?;
    let problem = Problem::from_sgf(&text)
        .map_err(|e| SolveError::Input(format!("{}: {e}", args.problem.display())))?;
    let (xs, ys) = (problem.board.x_size(), problem.board.y_size());
    let req = TsumegoRequest {
        region: tsumego::parse_region_text(&args.region, xs, ys)
            .or_else(|_| {
                let points: Vec<&str> = args.region.split(',').filter(|s| !s.is_empty()).collect();
                tsumego::parse_region_points(&points, xs, ys)
            })
            .map_err(|e| input(&format!("-region: {e}")))?,
        goal: tsumego::parse_goal(&args.goal).map_err(|e| input(&e))?,
        target: match &args.target {
            Some(t) => Some(tsumego::parse_point(t, xs, ys).map_err(|e| input(&e))?),
            None => None,
        },
        ko_threats: tsumego::parse_ko_threats(&args.ko_threats)
            .map_err(|e| input(&format!("-ko-threats: {e}")))?,
    };
    let prepared = tsumego::prepare(&problem.board, problem.to_move, problem.komi, &req)
        .map_err(|e| input(&e))?;
    if let Some(v) = args.visits {
        if !(1..=1_000_000_000).contains(&v) {
            return Err(input(&format!("-visits must be 1 to 1e9, not {v}")));
        }
    }
    let cfg = crate::setup::load_config_or_built_in(
        args.config.file.as_deref(),
        &args.config.overrides,
        crate::setup::GTP_CONFIG,
    )
    .map_err(|e| input(&e))?;
    let model = match &args.model {
        Some(m) => m.clone(),
        None => crate::setup::default_model()
            .ok_or_else(|| input(&crate::setup::SetupError::NoModel))?,
    };
    if crate::setup::is_missing_local_file(&model) {
        return Err(input(&format!("model file not found: {}", model.display())));
    }
    let net =
        crate::setup::load_network(&model, &cfg, 8).map_err(|e| SolveError::Run(e.to_string()))?;
    let mut settings = Vec::new();
    if !cfg.contains("numSearchThreads") {
        settings.push((
            "numSearchThreads".to_string(),
            serde_json::Value::from(net.default_search_threads),
        ));
    }
    settings.extend(crate::setup::search_settings(&cfg));
    let mut params =
        SearchParams::from_overrides(SetupFor::Gtp, settings.iter().map(|(k, v)| (k.as_str(), v)))
            .map_err(|e| input(&e))?;
    if let Some(v) = args.visits {
        params.max_visits = v;
        params.max_playouts = v;
        params.max_time = 1e20;
    }
    let rules = Rules {
        komi: problem.komi,
        ..Rules::default()
    };
    let snap = search(&prepared, rules, params, &net.evaluator)?;
    let sgf = solution_tree(&problem, &prepared, &snap, &net.model_name).to_sgf();
    match &args.output {
        Some(path) => write_whole(path, &format!("{sgf}\n"))
            .map_err(|e| SolveError::Run(format!("writing {}: {e}", path.display())))?,
        None => println!("{sgf}"),
    }
    Ok(())
}

/// Writes `text` to `PATH.tmp` and renames it to `path`, so that after a
/// kill the file is either the whole solution or what was there before.
fn write_whole(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Plies below the root for which the restriction holds: all of them.
const WHOLE_SEARCH: u32 = 1_000_000_000;

/// Searches the framed problem, both sides restricted to its points.
fn search(
    prepared: &Prepared,
    rules: Rules,
    params: SearchParams,
    evaluator: &std::sync::Arc<crate::search::NnSearchEvaluator>,
) -> Result<AnalysisSnapshot, SolveError> {
    let state = GameState::start(
        prepared.board.clone(),
        prepared.to_move,
        rules,
        GameOptions::default(),
    );
    let mut search = Search::new(params, evaluator.clone(), state, 0x0750_5e60);
    search.set_include_ownership(true);
    let moves = prepared.allowed_moves();
    for player in Player::BOTH {
        search.set_allow_moves(player, &moves, WHOLE_SEARCH);
    }
    search
        .run(&RunOptions::default())
        .map_err(|e| SolveError::Run(format!("search: {e}")))?;
    Ok(search.view().snapshot(&SnapshotRequest {
        pv_len: MAIN_LINE,
        min_moves: 0,
        moves_ownership: true,
        ownership: true,
        ownership_stdev: false,
    }))
}

/// A problem read from SGF.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The game record (setup, size, komi), moves dropped.
    pub record: GameRecord,
    /// The setup stones on a board.
    pub board: Board,
    /// Who plays first.
    pub to_move: Player,
    /// Komi (the SGF's, else 7.5).
    pub komi: f32,
}

impl Problem {
    /// Reads the first game of `text`: its setup, size, komi and side to play.
    pub fn from_sgf(text: &str) -> Result<Problem, String> {
        let trees = parse_collection(text).map_err(|e| e.to_string())?;
        let tree = trees.first().ok_or("the file holds no SGF game")?;
        let mut record = tree.record().map_err(|e| e.to_string())?;
        let mut board = Board::new(record.x_size, record.y_size).map_err(|e| e.to_string())?;
        for &(color, (x, y)) in &record.setup {
            board.set_stone(Loc::from_xy(x, y, record.x_size), color);
        }
        if !board.locs().any(|l| board.get(l) != Color::Empty) {
            return Err("the problem has no setup stones (AB/AW)".into());
        }
        let to_move = record
            .player_to_move
            .or_else(|| record.moves.first().map(|m| m.0))
            .unwrap_or(Player::Black);
        record.player_to_move = Some(to_move);
        record.moves.clear();
        let komi = record
            .komi
            .filter(|k| k.is_finite())
            .unwrap_or(DEFAULT_KOMI);
        Ok(Problem {
            record,
            board,
            to_move,
            komi,
        })
    }
}

/// A move as an SGF node's property (`B[cd]`, `W[]` for a pass).
fn move_node(player: Player, mv: Move, x_size: usize) -> SgfNode {
    let mut node = SgfNode::new();
    let value = match mv {
        Move::Play(l) => {
            let (x, y) = l.xy(x_size);
            crate::game::sgf::point(x, y)
        }
        _ => String::new(),
    };
    node.push(
        match player {
            Player::Black => "B",
            Player::White => "W",
        },
        value,
    );
    node
}

/// The problem's setup followed by the solution: winning first moves with
/// their main lines, then wrong first moves with their refutations.
pub fn solution_tree(
    problem: &Problem,
    prepared: &Prepared,
    snap: &AnalysisSnapshot,
    model_name: &str,
) -> SgfTree {
    let (xs, ys) = (prepared.board.x_size(), prepared.board.y_size());
    let gtp = |m: Move| m.to_gtp(xs, ys);
    let verdict = prepared.judge_snapshot(snap);
    let (_, lines) = tsumego::snapshot_lines(snap);
    let mut record = problem.record.clone();
    let root_visits = snap.root.as_ref().map_or(0, |r| r.visits);
    let winning: Vec<String> = verdict.winning_moves.iter().map(|&m| gtp(m)).collect();
    // The frame is not in the SGF: say whose threats it held, since a ko's
    // verdict (and threat moves in the lines) depends on them.
    let threats = match prepared.threats.first() {
        Some(t) => format!(
            " Ko threats in the frame: {} for {}.",
            prepared.threats.len(),
            player_name(t.side)
        ),
        None => String::new(),
    };
    record.game_comment = Some(format!(
        "{} to play, goal: {} (target {}). Correct first move{}: {}.{threats} \
         Solved by engine tsumego, {root_visits} visits, net {model_name}.",
        player_name(prepared.to_move),
        prepared.goal.name(),
        prepared
            .target_stones
            .first()
            .map_or("the region".to_string(), |&l| gtp(Move::Play(l))),
        if winning.len() == 1 { "" } else { "s" },
        if winning.is_empty() {
            "none found".to_string()
        } else {
            winning.join(", ")
        },
    ));
    let mut tree = record.to_tree();
    let mut top = NodeId::ROOT;
    while let Some(&child) = tree.children(top).first() {
        top = child;
    }
    let info = |mv: Move| -> Option<&MoveInfo> {
        snap.moves
            .iter()
            .find(|m| m.mv == mv && m.is_symmetry_of.is_none())
    };
    let status = |mv: Move| {
        lines.iter().find(|l| l.mv == mv).map(|l| {
            let own = l.ownership.clone().unwrap_or_default();
            prepared.target_status(&own, &l.pv).name()
        })
    };
    let mut branches: Vec<(Move, bool, Vec<Move>)> = verdict
        .winning_moves
        .iter()
        .map(|&m| {
            let pv = info(m).map_or(vec![m], |i| i.pv.clone());
            (m, true, pv)
        })
        .collect();
    for (m, line) in &verdict.refutations {
        branches.push((*m, false, line.clone()));
    }
    for (mv, correct, pv) in branches {
        let limit = if correct { MAIN_LINE } else { REFUTATION_LINE };
        let mut parent = top;
        let mut player = prepared.to_move;
        let pv_visits = info(mv).map(|i| i.pv_visits.clone()).unwrap_or_default();
        for (depth, &m) in pv.iter().take(limit).enumerate() {
            let mut node = move_node(player, m, xs);
            if depth == 0 {
                node.push(if correct { "TE" } else { "BM" }, "1");
                let (wr, visits) = info(mv).map_or((0.5, 0), |i| (i.winrate, i.visits));
                node.push(
                    "C",
                    format!(
                        "{}. Target: {}. Winrate ({}): {:.1}%, visits {visits}.",
                        if correct { "Correct" } else { "Wrong" },
                        status(mv).unwrap_or("unsettled"),
                        player_name(prepared.to_move),
                        100.0 * wr,
                    ),
                );
            } else if let Some(v) = pv_visits.get(depth) {
                node.push("C", format!("visits {v}"));
            }
            match tree.add_child(parent, node) {
                Some(id) => parent = id,
                None => break,
            }
            player = player.opp();
        }
    }
    tree
}

fn player_name(p: Player) -> &'static str {
    match p {
        Player::Black => "Black",
        Player::White => "White",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_reads_setup_side_and_komi() {
        let p = Problem::from_sgf("(;SZ[9]KM[6.5]AB[aa][ba]AW[ab];W[ca])").unwrap();
        assert_eq!(p.to_move, Player::White);
        assert_eq!(p.komi, 6.5);
        assert!(p.record.moves.is_empty());
        assert_eq!(p.board.get(Loc::from_xy(1, 0, 9)), Color::Black);
        let p = Problem::from_sgf("(;SZ[9]PL[W]AB[aa])").unwrap();
        assert_eq!((p.to_move, p.komi), (Player::White, DEFAULT_KOMI));
        assert!(Problem::from_sgf("(;SZ[9]").is_err());
        assert!(Problem::from_sgf("(;SZ[9])").is_err());
        assert!(Problem::from_sgf("not sgf").is_err());
        assert!(Problem::from_sgf("(;SZ[9]AB[zz])").is_err());
    }

    #[test]
    fn moves_are_sgf_nodes() {
        let n = move_node(Player::White, Move::Play(Loc::from_xy(2, 3, 9)), 9);
        assert_eq!(n.get_first("W"), Some("cd"));
        let n = move_node(Player::Black, Move::Pass, 9);
        assert_eq!(n.get_first("B"), Some(""));
        assert_eq!(crate::game::sgf::point(27, 0), "Ba");
    }
}
