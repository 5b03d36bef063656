//! The SGF metadata a human-style net (KataGo's human SL nets, model files
//! with `metaEncoderVersion 1`) is told about the game: the players' ranks,
//! the time control, the date and the game's source. KataGo's
//! `neuralnet/sgfmetadata.cpp`: [`SgfMetadata::profile`] is its
//! `getProfile` (the `humanSLProfile` names), [`SgfMetadata::fill_row`] its
//! `fillMetadataRow` (the net's 192 metadata inputs) and
//! [`SgfMetadata::hash`] its `getHash` (part of the NN cache key).

use crate::game::Player;

/// Number of metadata inputs of `metaEncoderVersion` 1.
pub const METADATA_INPUT_NUM_CHANNELS: usize = 192;

/// Where a game was played (KataGo's `SOURCE_*`); the net has one input
/// per source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameSource {
    /// Not known.
    Unknown = 0,
    /// Online Go Server.
    Ogs = 1,
    /// KGS.
    Kgs = 2,
    /// Fox.
    Fox = 3,
    /// Tygem.
    Tygem = 4,
    /// GoGoD (historical professional games).
    Gogod = 5,
    /// Go4Go (modern professional games).
    Go4go = 6,
}

/// How the game's clock ran (exactly one kind per game).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeControl {
    /// Not known.
    Unknown,
    /// No clock.
    None,
    /// Main time only.
    Absolute {
        /// Main time.
        main_seconds: f64,
    },
    /// A fixed time per move.
    Simple {
        /// Time per move.
        period_seconds: f64,
    },
    /// Main time, then byo-yomi periods.
    ByoYomi {
        /// Main time.
        main_seconds: f64,
        /// One period.
        period_seconds: f64,
        /// Number of periods.
        periods: u32,
    },
    /// Main time, then Canadian overtime.
    Canadian {
        /// Main time.
        main_seconds: f64,
        /// One overtime period.
        period_seconds: f64,
        /// Moves per period.
        moves: u32,
    },
    /// Fischer increments.
    Fischer {
        /// Main time.
        main_seconds: f64,
        /// Increment per move.
        increment_seconds: f64,
    },
}

impl TimeControl {
    /// KataGo's `(whichTC, mainTimeSeconds, periodTimeSeconds,
    /// byoYomiPeriods, canadianMoves)`; `whichTC` is 1..=7 in the order of
    /// the net's one-hot inputs 75..=81.
    fn fields(&self) -> (u32, f64, f64, u32, u32) {
        match *self {
            TimeControl::Unknown => (1, 0.0, 0.0, 0, 0),
            TimeControl::None => (2, 0.0, 0.0, 0, 0),
            TimeControl::Absolute { main_seconds } => (3, main_seconds, 0.0, 0, 0),
            TimeControl::Simple { period_seconds } => (4, 0.0, period_seconds, 0, 0),
            TimeControl::ByoYomi {
                main_seconds,
                period_seconds,
                periods,
            } => (5, main_seconds, period_seconds, periods, 0),
            TimeControl::Canadian {
                main_seconds,
                period_seconds,
                moves,
            } => (6, main_seconds, period_seconds, 0, moves),
            TimeControl::Fischer {
                main_seconds,
                increment_seconds,
            } => (7, main_seconds, increment_seconds, 0, 0),
        }
    }
}

/// One player's strength as the metadata gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerRank {
    /// A ranked human or bot: KataGo's inverse rank, 1 = 9 dan, 9 = 1 dan,
    /// 10 = 1 kyu, 29 = 20 kyu (0 would be a bot stronger than 9d).
    Ranked(u8),
    /// A player the server marks as unranked (KGS's "-").
    Unranked,
    /// The record gives no rank.
    Unknown,
}

/// One player of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayerMeta {
    /// Rank.
    pub rank: PlayerRank,
    /// Whether the player is a human (not a bot).
    pub is_human: bool,
}

/// A date of the proleptic Gregorian calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameDate {
    /// Year.
    pub year: i32,
    /// Month, 1..=12.
    pub month: u32,
    /// Day, 1..=31.
    pub day: u32,
}

impl GameDate {
    /// Days from 1970-01-01 to this date (negative before it), as KataGo's
    /// `numDaysAfter(SimpleDate(1970,1,1))`.
    pub fn days_since_epoch(&self) -> i64 {
        // Howard Hinnant's days_from_civil.
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.month);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }
}

/// What a human-style net is told about a game (KataGo's `SGFMetadata`,
/// always initialised: KataGo's uninitialised profile is `None` where it
/// is kept).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgfMetadata {
    /// Black.
    pub black: PlayerMeta,
    /// White.
    pub white: PlayerMeta,
    /// `Some(true)` for an unrated game, `None` when not known.
    pub unrated: Option<bool>,
    /// The clock.
    pub time_control: TimeControl,
    /// When the game was played.
    pub date: GameDate,
    /// Where.
    pub source: GameSource,
}

/// A `humanSLProfile` name that is none of KataGo's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown human SL profile '{0}': expected rank_<R>, preaz_<R>, rank_<R>_<R>, preaz_<R>_<R> \
     (R one of 20k..1k, 1d..9d; black's rank first) or proyear_<YEAR> (1800 to 2023)"
)]
pub struct UnknownProfile(pub String);

/// KataGo's inverse rank of `9d`..`1d`, `1k`..`20k`.
fn inverse_rank(s: &str) -> Option<u8> {
    let (n, kind) = s.split_at(s.len().checked_sub(1)?);
    // Only KataGo's spellings: no sign, no leading zero.
    if n.is_empty() || n.starts_with(['0', '+']) {
        return None;
    }
    let n: u8 = n.parse().ok()?;
    match kind {
        "d" if (1..=9).contains(&n) => Some(10 - n),
        "k" if (1..=20).contains(&n) => Some(9 + n),
        _ => None,
    }
}

impl SgfMetadata {
    /// The profile of a `humanSLProfile` name: `None` for KataGo's names of
    /// "no profile" (`""`, `_` and `""` in quotes), an error listing the
    /// valid names for anything KataGo refuses.
    pub fn profile(name: &str) -> Result<Option<SgfMetadata>, UnknownProfile> {
        if name.is_empty() || name == "_" || name == "\"\"" {
            return Ok(None);
        }
        let unknown = || UnknownProfile(name.to_string());
        if let Some(year) = name.strip_prefix("proyear_") {
            // KataGo's tryStringToInt: an optional sign, then digits.
            let year: i32 = year.parse().map_err(|_| unknown())?;
            let source = match year {
                1800..=2020 => GameSource::Gogod,
                2021..=2023 => GameSource::Go4go,
                _ => return Err(unknown()),
            };
            let pro = PlayerMeta {
                rank: PlayerRank::Ranked(1),
                is_human: true,
            };
            return Ok(Some(SgfMetadata {
                black: pro,
                white: pro,
                unrated: Some(false),
                time_control: TimeControl::Unknown,
                date: GameDate {
                    year,
                    month: 6,
                    day: 1,
                },
                source,
            }));
        }
        let (ranks, pre_az) = if let Some(r) = name.strip_prefix("rank_") {
            (r, false)
        } else if let Some(r) = name.strip_prefix("preaz_") {
            (r, true)
        } else {
            return Err(unknown());
        };
        let (black, white) = match inverse_rank(ranks) {
            Some(r) => (r, r),
            None => {
                let (b, w) = ranks.split_once('_').ok_or_else(unknown)?;
                (
                    inverse_rank(b).ok_or_else(unknown)?,
                    inverse_rank(w).ok_or_else(unknown)?,
                )
            }
        };
        let player = |r| PlayerMeta {
            rank: PlayerRank::Ranked(r),
            is_human: true,
        };
        // KataGo: KGS's rating system, its usual byo-yomi, a date before
        // or after AlphaZero's influence.
        Ok(Some(SgfMetadata {
            black: player(black),
            white: player(white),
            unrated: None,
            time_control: TimeControl::ByoYomi {
                main_seconds: 1200.0,
                period_seconds: 30.0,
                periods: 5,
            },
            date: if pre_az {
                GameDate {
                    year: 2016,
                    month: 9,
                    day: 1,
                }
            } else {
                GameDate {
                    year: 2020,
                    month: 3,
                    day: 1,
                }
            },
            source: GameSource::Kgs,
        }))
    }

    /// The net's metadata inputs for `next_player` to move on a board of
    /// `board_area` points (KataGo's `fillMetadataRow`). `row` must hold
    /// [`METADATA_INPUT_NUM_CHANNELS`] values.
    pub fn fill_row(&self, row: &mut [f32], next_player: Player, board_area: usize) {
        const RANK_START: usize = 6;
        const RANK_LEN: usize = 34;
        const DATE_START: usize = 87;
        const DATE_LEN: usize = 32;
        const SOURCE_START: usize = 151;
        let row = &mut row[..METADATA_INPUT_NUM_CHANNELS];
        row.fill(0.0);
        let (pla, opp) = match next_player {
            Player::White => (&self.white, &self.black),
            Player::Black => (&self.black, &self.white),
        };
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        for (i, p) in [pla, opp].into_iter().enumerate() {
            row[i] = flag(p.is_human);
            row[2 + i] = flag(p.rank == PlayerRank::Unranked);
            row[4 + i] = flag(p.rank == PlayerRank::Unknown);
            // KataGo fills the thermometer for an unknown rank too: its
            // inverse rank is 0 there, so nothing is set.
            if let PlayerRank::Ranked(r) = p.rank {
                let start = RANK_START + i * RANK_LEN;
                row[start..start + usize::from(r).min(RANK_LEN)].fill(1.0);
            }
        }
        row[74] = match self.unrated {
            None => 0.5,
            Some(u) => flag(u),
        };
        let (which, main, period, periods, moves) = self.time_control.fields();
        row[74 + which as usize] = 1.0;
        let main = main.clamp(0.0, 3.0 * 86400.0);
        let period = period.clamp(0.0, 86400.0);
        row[82] = (0.4 * ((main + 60.0).ln() - 6.5)) as f32;
        row[83] = (0.3 * ((period + 1.0).ln() - 3.0)) as f32;
        row[84] = (0.5 * ((f64::from(periods.min(50)) + 2.0).ln() - 1.5)) as f32;
        row[85] = (0.25 * ((f64::from(moves.min(50)) + 2.0).ln() - 1.5)) as f32;
        row[86] = (0.5 * (board_area as f64 / 361.0).ln()) as f32;
        let days = self.date.days_since_epoch() as f64;
        // Periods from a week (KataGo wonders about a day-of-the-week
        // effect) up by a factor 80000^(1/31) each.
        let factor = 80000f64.powf(1.0 / (DATE_LEN - 1) as f64);
        let mut period = 7.0;
        for i in 0..DATE_LEN {
            let angle = days / period * std::f64::consts::TAU;
            row[DATE_START + 2 * i] = angle.cos() as f32;
            row[DATE_START + 2 * i + 1] = angle.sin() as f32;
            period *= factor;
        }
        row[SOURCE_START + self.source as usize] = 1.0;
    }

    /// KataGo's `SGFMetadata::getHash(nextPlayer)`, mixed into the NN cache
    /// key of a net that reads metadata.
    pub fn hash(&self, next_player: Player) -> (u64, u64) {
        let player_bits = |p: &PlayerMeta| {
            let (inverse, unranked, unknown) = match p.rank {
                PlayerRank::Ranked(r) => (u32::from(r), 0, 0),
                PlayerRank::Unranked => (0, 1, 0),
                PlayerRank::Unknown => (0, 0, 1),
            };
            inverse + unranked * 128 + unknown * 256 + u32::from(p.is_human) * 512
        };
        let (b, w) = (player_bits(&self.black), player_bits(&self.white));
        let mut x0 = match next_player {
            Player::Black => b + (w << 10),
            Player::White => w + (b << 10),
        };
        x0 += u32::from(self.unrated == Some(true)) << 20;
        x0 += u32::from(self.unrated.is_none()) << 21;
        let (which, main, period, periods, moves) = self.time_control.fields();
        x0 += which << 22;
        x0 = x0.wrapping_add((self.source as u32) << 25);
        let main = main.clamp(0.0, 3.0 * 86400.0);
        let period = period.clamp(0.0, 86400.0);
        let x1 = ((main * 4.0) as u32).wrapping_add(periods.min(50) << 24);
        let x2 = ((period * 32.0) as u32).wrapping_add(moves.min(50) << 24);
        let x3 = self.date.days_since_epoch() as i32 as u32;
        let combine = |hi: u32, lo: u32| (u64::from(hi) << 32) | u64::from(lo);
        let mut h0 = nasam(combine(x0, x1));
        let mut h1 = combine(x2, x3).wrapping_add(h0);
        h1 = nasam(h1);
        h0 = h0.wrapping_add(h1);
        (h0, h1)
    }

    /// `hash` (an NN input hash) with this profile mixed in, as KataGo
    /// keys the NN cache of a net that reads metadata.
    pub fn mix_into(&self, hash: u128, next_player: Player) -> u128 {
        let (h0, h1) = self.hash(next_player);
        hash ^ (u128::from(h0) | (u128::from(h1) << 64))
    }
}

/// KataGo's `Hash::nasam` (Pelle Evensen's mixer).
fn nasam(mut x: u64) -> u64 {
    x ^= x.rotate_right(25) ^ x.rotate_right(47);
    x = x.wrapping_mul(0x9e6c_63d0_676a_9a99);
    x ^= (x >> 23) ^ (x >> 51);
    x = x.wrapping_mul(0x9e6d_62d0_6f6a_9a9b);
    x ^= (x >> 23) ^ (x >> 51);
    x
}

#[cfg(test)]
#[path = "metadata_tests.rs"]
mod tests;
