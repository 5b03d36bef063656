//! The read loop of `engine gtp` and its start-up from the command line.

use crossbeam::channel::Receiver;

use crate::cli::EngineArgs;
use crate::config::Config;

use std::path::{Path, PathBuf};

use super::engine::{GtpEngine, GtpSettings, Handled};
use super::protocol::{parse_line, spawn_line_reader, InputLine, Output, ParsedLine};
use super::search_bot::SearchBot;

/// Serves commands from `lines` until `quit` or end of input. Any line,
/// even a blank one, first stops a running analysis or ponder (that is
/// how GUIs stop `kata-analyze`).
pub fn serve(engine: &mut GtpEngine, lines: Receiver<InputLine>) {
    let out = engine.out.clone();
    let log_all = engine.settings.log_all;
    for input in lines.iter() {
        engine.stop_background();
        let raw = match input {
            InputLine::Text(raw) => raw,
            InputLine::Refused { id, message } => {
                out.respond(id, false, &message);
                continue;
            }
        };
        match parse_line(&raw) {
            ParsedLine::Empty => {}
            ParsedLine::Invalid { id, message } => out.respond(id, false, &message),
            ParsedLine::Command(c) => {
                if log_all {
                    eprintln!("Controller: {}", raw.trim_end());
                }
                match engine.handle(&c) {
                    Handled::Ok(text) => out.respond(c.id, true, &text),
                    Handled::Err(text) => out.respond(c.id, false, &text),
                    Handled::Written => {}
                    Handled::Quit => {
                        out.respond(c.id, true, "");
                        break;
                    }
                }
            }
        }
    }
    engine.stop_background();
}

/// Runs `engine gtp` with the given flags on stdin/stdout; returns the
/// exit code (2 for a missing network or bad flags, 1 for other start-up
/// failures). Messages go to stderr, never to stdout.
pub fn run(args: &EngineArgs) -> i32 {
    match start(args) {
        Ok(mut engine) => {
            let stdin = std::io::BufReader::new(std::io::stdin());
            serve(&mut engine, spawn_line_reader(stdin));
            0
        }
        Err(StartError { code, message }) => {
            eprintln!("engine gtp: {message}");
            code
        }
    }
}

/// Why `engine gtp` could not start, with its exit code.
struct StartError {
    code: i32,
    message: String,
}

impl From<String> for StartError {
    fn from(message: String) -> StartError {
        StartError { code: 1, message }
    }
}

/// Folders searched for the project's default network, in order: `models/`
/// beside the executable, in the checkout the executable was built in
/// (`target/<profile>/../../models`), and in the working directory.
fn default_model_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(exe_dir.join("models"));
        dirs.push(exe_dir.join("../../models"));
    }
    dirs.push(PathBuf::from("models"));
    dirs
}

/// The project's default network: the first `*.bin.gz` (by name) in the
/// first folder of [`default_model_dirs`] that has one.
fn default_model() -> Option<PathBuf> {
    default_model_dirs().into_iter().find_map(|dir| {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.ends_with(".bin.gz") || n.ends_with(".bin"))
            })
            .collect();
        found.sort();
        found.into_iter().next()
    })
}

fn start(args: &EngineArgs) -> Result<GtpEngine, StartError> {
    let mut cfg = match &args.config {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None => Config::from_toml_str("", "(no config)").map_err(|e| e.to_string())?,
    };
    for o in &args.override_config {
        cfg.apply_overrides(o).map_err(|e| e.to_string())?;
    }
    let settings = GtpSettings::from_config(&cfg)?;
    let no_limit = !cfg.contains_any(&["maxPlayouts", "maxVisits", "maxTime"]);
    let model = match &args.model {
        Some(model) => model.clone(),
        None => default_model().ok_or_else(|| StartError {
            code: 2,
            message: "no network given and no default network found in models/.\n\
                 Pass a KataGo network with -model, e.g.\n  \
                 engine gtp -model kata1-b18c384nbt-s9996604416-d4316597426.bin.gz \
                 -config configs/gtp.toml\n\
                 (networks: https://katagotraining.org/networks/ ; any KataGo .bin.gz works)"
                .to_string(),
        })?,
    };
    if !model.is_file() {
        return Err(StartError {
            code: 2,
            message: format!("model file not found: {}", model.display()),
        });
    }
    let net = crate::setup::load_network(&model, &cfg, 16).map_err(|e| e.to_string())?;
    eprintln!(
        "Loaded model {} ({}, max batch {})",
        net.model_name, net.device, net.max_batch_size
    );
    let seed = rand::random::<u64>();
    let bot = Box::new(SearchBot::new(&net, &cfg, seed)?);
    eprintln!(
        "Using {} rules initially, unless GTP/GUI overrides this",
        settings.initial_rules.to_string_no_komi_maybe_nice()
    );
    let engine = GtpEngine::new(settings, bot, Output::stdout(), no_limit)?;
    eprintln!("GTP ready, beginning main protocol loop");
    Ok(engine)
}
