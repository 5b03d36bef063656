//! The read loop of `engine gtp` and its start-up from the command line.

use crossbeam::channel::Receiver;

use crate::cli::EngineArgs;
use crate::config::Config;

use super::bot::RandomBot;
use super::engine::{GtpEngine, GtpSettings, Handled};
use super::protocol::{parse_line, spawn_line_reader, Output, ParsedLine};

/// Serves commands from `lines` until `quit` or end of input. Any line,
/// even a blank one, first stops a running analysis or ponder (that is
/// how GUIs stop `kata-analyze`).
pub fn serve(engine: &mut GtpEngine, lines: Receiver<String>) {
    let out = engine.out.clone();
    let log_all = engine.settings.log_all;
    for raw in lines.iter() {
        engine.stop_background();
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
/// exit code. Messages go to stderr, never to stdout.
pub fn run(args: &EngineArgs) -> i32 {
    match start(args) {
        Ok(mut engine) => {
            let stdin = std::io::BufReader::new(std::io::stdin());
            serve(&mut engine, spawn_line_reader(stdin));
            0
        }
        Err(e) => {
            eprintln!("engine gtp: {e}");
            1
        }
    }
}

fn start(args: &EngineArgs) -> Result<GtpEngine, String> {
    let mut cfg = match &args.config {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None => Config::from_toml_str("", "(no config)").map_err(|e| e.to_string())?,
    };
    for o in &args.override_config {
        cfg.apply_overrides(o).map_err(|e| e.to_string())?;
    }
    let settings = GtpSettings::from_config(&cfg)?;
    let no_limit = !cfg.contains_any(&["maxPlayouts", "maxVisits", "maxTime"]);
    if let Some(model) = &args.model {
        if !model.is_file() {
            return Err(format!("model file not found: {}", model.display()));
        }
    }
    // The search is wired in by the lead; until then a random player
    // serves the protocol.
    let bot = Box::new(RandomBot::new(0x5eed));
    eprintln!(
        "Using {} rules initially, unless GTP/GUI overrides this",
        settings.initial_rules.to_string_no_komi_maybe_nice()
    );
    let engine = GtpEngine::new(settings, bot, Output::stdout(), no_limit)?;
    eprintln!("GTP ready, beginning main protocol loop");
    Ok(engine)
}
