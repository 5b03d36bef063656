//! The read loop of `engine gtp` and its start-up from the command line.

use crossbeam::channel::Receiver;

use crate::exit::{CommandError, CommandResult, Exit, Failure};
use crate::setup::{EngineArgs, SetupError};

use super::auto_avoid::AutoAvoidGames;
use super::engine::{GtpEngine, Handled};
use super::protocol::{parse_line, spawn_line_reader, InputLine, Output, ParsedLine};
use super::search_bot::SearchBot;
use super::settings::GtpSettings;

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
                    crate::logfile::line(&format!("Controller: {}", raw.trim_end()));
                }
                match engine.handle(&c) {
                    Handled::Ok(text) => {
                        if log_all {
                            crate::logfile::line(&format!("= {text}"));
                        }
                        out.respond(c.id, true, &text)
                    }
                    Handled::Err(text) => {
                        if log_all {
                            crate::logfile::line(&format!("? {text}"));
                        }
                        out.respond(c.id, false, &text)
                    }
                    Handled::Written => {}
                    Handled::Quit => {
                        // Saved before the answer, as KataGo: a controller
                        // may end the process once it has it.
                        engine.auto_avoid_finish();
                        out.respond(c.id, true, "");
                        break;
                    }
                }
            }
        }
    }
    engine.stop_background();
    engine.auto_avoid_finish();
}

/// Runs `engine gtp` with the given flags on stdin/stdout (a usage
/// failure for a missing network or bad flags, a runtime one for other
/// start-up failures). Messages go to stderr, never to stdout.
pub fn run(args: &EngineArgs) -> CommandResult {
    let mut engine = start(args).map_err(|e| CommandError::new(e.failure, e.message))?;
    let stdin = std::io::BufReader::new(std::io::stdin());
    serve(&mut engine, spawn_line_reader(stdin));
    Ok(Exit::Success)
}

/// Why `engine gtp` could not start, with its kind of failure.
struct StartError {
    failure: Failure,
    message: String,
}

impl From<String> for StartError {
    fn from(message: String) -> StartError {
        StartError {
            failure: Failure::Runtime,
            message,
        }
    }
}

fn start(args: &EngineArgs) -> Result<GtpEngine, StartError> {
    let startup = crate::setup::start(args, crate::setup::GTP_CONFIG).map_err(|e| e.to_string())?;
    let cfg = &startup.config;
    // KataGo's GTP logs to stderr only without a log file, by default.
    let log = crate::logfile::LogSettings::from_config(cfg, false).map_err(|e| e.to_string())?;
    if let Some(path) = crate::logfile::start(&log).map_err(|e| e.to_string())? {
        crate::logfile::startup(&format!("Logging to {}", path.display()));
    }
    let settings = GtpSettings::from_config(cfg)?;
    let no_limit = !cfg.contains_any(&["maxPlayouts", "maxVisits", "maxTime"]);
    let model = startup.model_path().map_err(|e| StartError {
        failure: Failure::Usage,
        message: e.to_string(),
    })?;
    let net = startup
        .load_network(&model, 16)
        .map_err(|e: SetupError| e.to_string())?;
    crate::logfile::startup(&format!(
        "Loaded model {} ({}, max batch {})",
        net.model_name, net.device, net.max_batch_size
    ));
    let threads = super::settings::SEARCH_THREADS
        .read(cfg)
        .map_err(|e| e.to_string())?
        .unwrap_or(net.default_search_threads as i64);
    crate::logfile::startup(&crate::setup::machine_report(
        cfg,
        &[
            ("numSearchThreads", threads.to_string()),
            ("nnMaxBatchSize", net.max_batch_size.to_string()),
            ("numNNServerThreadsPerModel", net.server_threads.to_string()),
            (
                "nnCacheSizePowerOfTwo",
                net.asked_cache_power_of_two.to_string(),
            ),
        ],
    ));
    crate::setup::refuse_human_keys_without_human_model(cfg, startup.human_model.is_some())
        .map_err(|e| e.to_string())?;
    let human = startup
        .human_network(16)
        .map_err(|e: SetupError| e.to_string())?;
    if let Some(h) = &human {
        crate::logfile::startup(&format!(
            "Loaded human SL model {} ({}, max batch {})",
            h.model_name, h.device, h.max_batch_size
        ));
    }
    // KataGo's `searchRandSeed`: a fixed seed makes a one-thread search
    // (and, through it, the net's symmetries) repeat exactly.
    let seed = crate::setup::rand_seed(cfg, "searchRandSeed")
        .map_err(|e| e.to_string())?
        .unwrap_or_else(rand::random::<u64>);
    let bot = Box::new(SearchBot::new(&net, human.as_ref(), cfg, seed)?);
    crate::logfile::startup(&format!(
        "Using {} rules initially, unless GTP/GUI overrides this",
        settings.initial_rules.to_string_no_komi_maybe_nice()
    ));
    let mut engine = GtpEngine::new(settings, bot, Output::stdout(), no_limit)?;
    if let Some(repeat) = crate::setup::auto_avoid_repeat(cfg).map_err(|e| e.to_string())? {
        if crate::setup::avoid_sgf_pattern_table(cfg, 0)
            .map_err(|e| e.to_string())?
            .is_some()
        {
            return Err("Providing both sgf avoid patterns and auto avoid patterns is not implemented right now".to_string().into());
        }
        engine.set_auto_avoid(AutoAvoidGames::new(repeat, rand::random()));
    }
    for line in crate::setup::config_key_report(cfg, "engine gtp") {
        crate::logfile::startup(&line);
    }
    crate::logfile::startup("GTP ready, beginning main protocol loop");
    Ok(engine)
}
