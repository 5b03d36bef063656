//! How a command ended, and the one table from that to the process exit
//! code.
//!
//! Every command's `run` returns a [`CommandResult`]; `engine`'s `main`
//! turns it into the exit code with [`code`] and prints a failure's message
//! as `engine <command>: <message>`. The codes are listed in the README's
//! "Exit codes" table; scripts and tests rely on them, so a code may be
//! added but not changed.
//!
//! This is a foundation module (no `crate::` imports) so that commands at
//! every layer, `data`'s shuffle as well as `learn`, return the same type.

use std::fmt::Display;

/// A command that did what it was asked, or stopped in a way a script
/// acts on (not a failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Done: 0.
    Success,
    /// `selfplay`, `learn`: a signal stopped it after it wrote its work;
    /// running the same command goes on: 3.
    Stopped,
    /// `shuffle`: not enough rows yet, nothing written (wait for more
    /// self-play): 3.
    TooFewRows,
    /// `learn`: another learner holds the run's lease: 4.
    Held,
}

impl Exit {
    /// The process exit code.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Stopped | Exit::TooFewRows => 3,
            Exit::Held => 4,
        }
    }

    /// The exit code for `std::process::exit`, for the few places that must
    /// end the process from a signal handler's thread.
    pub const fn process_code(self) -> i32 {
        self.code() as i32
    }
}

/// What kind of failure a command met; the kind decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// It failed while working: a file, the network, a device, a store: 1.
    Runtime,
    /// Bad flags, bad input or a bad config (nothing was done): 2.
    Usage,
    /// `selfplay`: a second signal ended it at once, unwritten games lost:
    /// 130 (the shell's code for an interrupt).
    Interrupted,
}

impl Failure {
    /// The process exit code.
    pub const fn code(self) -> u8 {
        match self {
            Failure::Runtime => 1,
            Failure::Usage => 2,
            Failure::Interrupted => 130,
        }
    }

    /// The exit code for `std::process::exit` (see [`Exit::process_code`]).
    pub const fn process_code(self) -> i32 {
        self.code() as i32
    }
}

/// Why a command failed: the kind (the exit code) and the message that
/// `main` prints after `engine <command>: `.
#[derive(Debug)]
pub struct CommandError {
    /// The kind of failure.
    pub failure: Failure,
    /// The message; `None` when the command already reported it (for
    /// example in the middle of its own output).
    pub message: Option<String>,
    /// The name printed before the message when it is not the command's
    /// own (`learn status`).
    pub who: Option<&'static str>,
}

impl CommandError {
    /// A failure while working (exit code 1).
    pub fn runtime(message: impl Display) -> CommandError {
        CommandError::new(Failure::Runtime, message)
    }

    /// Bad flags, input or config (exit code 2).
    pub fn usage(message: impl Display) -> CommandError {
        CommandError::new(Failure::Usage, message)
    }

    /// A failure of the given kind with its message.
    pub fn new(failure: Failure, message: impl Display) -> CommandError {
        CommandError {
            failure,
            message: Some(message.to_string()),
            who: None,
        }
    }

    /// The same failure, printed as `engine <who>: ...`.
    pub fn from_part(mut self, who: &'static str) -> CommandError {
        self.who = Some(who);
        self
    }
}

/// What every command's `run` returns.
pub type CommandResult = Result<Exit, CommandError>;

/// The exit code of a command's result, printing a failure's message on
/// the way through `report` (which gets `engine <command>: <message>`).
pub fn code(command: &str, result: CommandResult, report: impl FnOnce(&str)) -> u8 {
    match result {
        Ok(exit) => exit.code(),
        Err(e) => {
            if let Some(message) = &e.message {
                report(&format!("engine {}: {message}", e.who.unwrap_or(command)));
            }
            e.failure.code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ones() {
        assert_eq!(Exit::Success.code(), 0);
        assert_eq!(Failure::Runtime.code(), 1);
        assert_eq!(Failure::Usage.code(), 2);
        assert_eq!(Exit::Stopped.code(), 3);
        assert_eq!(Exit::TooFewRows.code(), 3);
        assert_eq!(Exit::Held.code(), 4);
        assert_eq!(Failure::Interrupted.code(), 130);
    }

    #[test]
    fn a_failure_is_printed_with_its_command() {
        let mut printed = Vec::new();
        let usage = code("match", Err(CommandError::usage("bad flag")), |l| {
            printed.push(l.to_string())
        });
        assert_eq!(
            (usage, printed),
            (2, vec!["engine match: bad flag".to_string()])
        );
        let mut printed = Vec::new();
        let e = CommandError::runtime("gone").from_part("learn status");
        assert_eq!(
            code("learn", Err(e), |l: &str| printed.push(l.to_string())),
            1
        );
        assert_eq!(printed, ["engine learn status: gone"]);
        assert_eq!(
            code("gtp", Ok(Exit::Success), |_| panic!("nothing to print")),
            0
        );
    }
}
