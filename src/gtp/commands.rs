//! The GTP command table: every command the engine answers, in KataGo's
//! `list_commands` order, with the code that runs it. `list_commands`,
//! `known_command` and the dispatch all read this one table, so a command
//! cannot be listed and left unhandled.

use super::engine::{GtpEngine, Handled};
use super::protocol::CommandLine;
use crate::game::Player;
use crate::numfmt::format_g;
use crate::timecontrol::{self as time, KATA_TIME_SETTINGS_LIST};

/// How a command runs.
type Run = fn(&mut GtpEngine, &CommandLine) -> Handled;

/// `(name, run)` for every command, in KataGo's order.
const COMMANDS: &[(&str, Run)] = &[
    ("protocol_version", |_, _| Handled::Ok("2".into())),
    ("name", |e, _| Handled::Ok(e.name.clone())),
    ("version", |e, _| Handled::Ok(e.version.clone())),
    ("known_command", known_command),
    ("list_commands", |_, _| {
        Handled::Ok(known_commands().collect::<Vec<_>>().join("\n"))
    }),
    ("quit", |_, _| Handled::Quit),
    ("boardsize", |e, c| e.boardsize(&c.args).into()),
    ("rectangular_boardsize", |e, c| e.boardsize(&c.args).into()),
    ("clear_board", |e, _| {
        e.game.clear();
        e.tsumego_frame = None;
        e.recent_win_loss.clear();
        Handled::Ok(String::new())
    }),
    ("set_position", |e, c| e.set_position(&c.args).into()),
    ("komi", |e, c| e.komi(&c.args).into()),
    ("get_komi", |e, _| {
        Handled::Ok(format_g(e.game.rules().komi as f64, false))
    }),
    ("play", |e, c| e.play(&c.args).into()),
    ("undo", |e, _| {
        if e.game.undo() {
            Handled::Ok(String::new())
        } else {
            Handled::Err("cannot undo".into())
        }
    }),
    ("kata-get-rules", |e, _| {
        Handled::Ok(e.game.rules().to_json(false).to_string())
    }),
    ("kata-set-rule", |e, c| e.set_rule(&c.args).into()),
    ("kata-set-rules", |e, c| {
        e.set_rules_text(&c.joined_args()).into()
    }),
    ("kata-get-models", |e, _| Handled::Ok(e.models_json())),
    ("kata-get-param", get_param),
    ("kata-set-param", set_param),
    ("kata-get-params", |e, _| Handled::Ok(e.get_params_json())),
    ("kata-set-params", |e, c| {
        e.set_params_json(&c.joined_args()).into()
    }),
    ("kata-list-params", |e, _| {
        Handled::Ok(e.param_names().join(" "))
    }),
    ("kgs-rules", |e, c| e.kgs_rules(&c.args).into()),
    ("genmove", search),
    ("kata-search", search),
    ("kata-search_cancellable", search),
    ("genmove_debug", search),
    ("kata-search_debug", search),
    ("kata-tsumego", |e, c| e.tsumego(&c.args).into()),
    ("kata-tsumego-frame", |e, c| e.tsumego_frame(&c.args).into()),
    ("clear_cache", |e, _| {
        e.bot.lock().clear_cache();
        Handled::Ok(String::new())
    }),
    ("showboard", |e, _| {
        Handled::Ok(e.game.showboard().trim().to_string())
    }),
    ("fixed_handicap", |e, c| e.fixed_handicap(&c.args).into()),
    ("place_free_handicap", |e, c| {
        e.place_free_handicap(&c.args).into()
    }),
    ("set_free_handicap", |e, c| {
        e.set_free_handicap(&c.args).into()
    }),
    ("time_settings", |e, c| {
        e.set_clocks(time::parse_time_settings(&strs(&c.args)))
            .into()
    }),
    ("kgs-time_settings", |e, c| {
        e.set_clocks(time::parse_kgs_time_settings(&strs(&c.args)))
            .into()
    }),
    ("time_left", |e, c| e.time_left(&c.args).into()),
    ("kata-list_time_settings", |_, _| {
        Handled::Ok(KATA_TIME_SETTINGS_LIST.into())
    }),
    ("kata-time_settings", |e, c| {
        e.set_clocks(time::parse_kata_time_settings(&strs(&c.args)))
            .into()
    }),
    ("final_score", |e, _| Handled::Ok(e.final_score())),
    ("final_status_list", |e, c| {
        e.final_status_list(&c.args).into()
    }),
    ("loadsgf", |e, c| e.loadsgf(&c.args).into()),
    ("printsgf", |e, c| e.printsgf(&c.args).into()),
    ("genmove_analyze", search),
    ("lz-genmove_analyze", search),
    ("kata-genmove_analyze", search),
    ("kata-search_analyze", search),
    ("kata-search_analyze_cancellable", search),
    ("analyze", search),
    ("lz-analyze", search),
    ("kata-analyze", search),
    ("kata-raw-nn", |e, c| e.raw_nn(&c.args).into()),
    ("kata-raw-human-nn", |e, c| e.raw_human_nn(&c.args).into()),
    ("cputime", cputime),
    ("gomill-cpu_time", cputime),
    ("kata-benchmark", benchmark),
    ("kata-debug-print-tc", debug_print_tc),
    ("debug_moves", |e, c| e.debug_moves(&c.args).into()),
    ("stop", |_, _| Handled::Ok(String::new())),
];

/// Every command the engine answers, in KataGo's order (`list_commands`).
pub fn known_commands() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().map(|&(name, _)| name)
}

impl GtpEngine {
    /// Runs one command through [`COMMANDS`], or answers `unknown command`;
    /// the caller writes the answer for `Ok`/`Err`/`Quit`.
    pub fn handle(&mut self, c: &CommandLine) -> Handled {
        self.auto_avoid_before(&c.name);
        match COMMANDS.iter().find(|(name, _)| *name == c.name) {
            Some((_, run)) => run(self, c),
            None => Handled::Err("unknown command".into()),
        }
    }
}

fn search(e: &mut GtpEngine, c: &CommandLine) -> Handled {
    e.handle_search(c)
}

fn cputime(e: &mut GtpEngine, _: &CommandLine) -> Handled {
    Handled::Ok(format_g(e.genmove_time_sum, false))
}

/// `kata-benchmark VISITS`: KataGo's benchmark of the genmove search on 10
/// positions of the current (square) board size; the answer is the result
/// line (KataGo also streams its progress lines before it).
fn benchmark(e: &mut GtpEngine, c: &CommandLine) -> Handled {
    let [arg] = c.args.as_slice() else {
        return Handled::Err(format!(
            "Expected one argument for kata-benchmark but got '{}'",
            c.joined_args()
        ));
    };
    let Some(visits) = arg.parse::<i64>().ok().filter(|&v| v >= 1) else {
        return Handled::Err(format!("Could not parse number of visits: {arg}"));
    };
    let (xs, ys) = (e.game.x_size(), e.game.y_size());
    if xs != ys {
        return Handled::Err(format!(
            "Current board size is {xs}x{ys}, no built-in benchmarks for rectangular boards"
        ));
    }
    e.bot.lock().benchmark(xs, visits).into()
}

/// KataGo's clock state and time plan for each player: what the next
/// genmove would aim for, with the bot's `lagBuffer`.
fn debug_print_tc(e: &mut GtpEngine, _: &CommandLine) -> Handled {
    let lag_buffer = e.bot.lock().lag_buffer();
    let board = e.game.board();
    let (area, stones) = (board.x_size() * board.y_size(), board.num_stones());
    Handled::Ok(format!(
        "Black {}\nWhite {}",
        e.clocks[Player::Black].debug_string(area, stones, lag_buffer),
        e.clocks[Player::White].debug_string(area, stones, lag_buffer)
    ))
}

fn known_command(_: &mut GtpEngine, c: &CommandLine) -> Handled {
    match c.args.as_slice() {
        [cmd] => Handled::Ok(known_commands().any(|k| k == cmd).to_string()),
        _ => Handled::Err(format!(
            "Expected single argument for known_command but got '{}'",
            c.joined_args()
        )),
    }
}

fn get_param(e: &mut GtpEngine, c: &CommandLine) -> Handled {
    match c.args.as_slice() {
        [p] => e
            .get_param(p)
            .ok_or_else(|| format!("Invalid parameter: {p}"))
            .into(),
        _ => Handled::Err(format!(
            "Expected one arguments for kata-get-param but got '{}'",
            c.joined_args()
        )),
    }
}

fn set_param(e: &mut GtpEngine, c: &CommandLine) -> Handled {
    match c.args.as_slice() {
        [p] => e.set_params(&[(p.clone(), String::new())]).into(),
        [p, v] => e.set_params(&[(p.clone(), v.clone())]).into(),
        _ => Handled::Err(format!(
            "Expected one or two arguments for kata-set-param but got '{}'",
            c.joined_args()
        )),
    }
}

/// The arguments as `&str`s, for the time-control parsers.
pub(super) fn strs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}
