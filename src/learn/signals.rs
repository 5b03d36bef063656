//! Stop requests: Ctrl-C (SIGINT), SIGTERM and SIGUSR1 (the early warning
//! Slurm sends before a job's time limit with `--signal=B:USR1@N`) raise
//! one flag that the learner's steps poll.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: i32) {
    // Only async-signal-safe work here: two atomic stores.
    SIGNAL.store(sig, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handlers. A second signal changes nothing: the step in
/// progress finishes its stop (a checkpoint takes seconds).
pub fn install() -> Result<(), String> {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGUSR1] {
        // SAFETY: the handler only stores to atomics, which is
        // async-signal-safe; no other code of this process installs a
        // handler for these signals (`engine learn` runs no `ctrlc`).
        unsafe { sigaction(sig, &action) }
            .map_err(|e| format!("installing a {sig} handler: {e}"))?;
    }
    Ok(())
}

/// Whether a stop was asked for.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The flag itself, for the trainer's per-batch check.
pub fn flag() -> &'static AtomicBool {
    &STOP
}

/// The signal that asked for the stop, for messages.
pub fn name() -> String {
    match Signal::try_from(SIGNAL.load(Ordering::SeqCst)) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => "a signal".to_string(),
    }
}
