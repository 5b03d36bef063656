//! Self-play settings read from a config with KataGo's key names and
//! defaults (`cpp/configs/training/selfplay1.cfg`, `PlaySettings` and
//! `GameInitializer` in `cpp/program/play.cpp`).

use crate::config::{Config, ConfigError};
use rand::Rng;

use crate::game::{KoRule, Rules, ScoringRule, TaxRule, WhiteHandicapBonusRule};

/// Why the self-play settings are unusable.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A key is missing, mistyped or out of range.
    #[error(transparent)]
    Config(#[from] Box<ConfigError>),
    /// Keys that contradict each other or a value KataGo rejects.
    #[error("{0}")]
    Invalid(String),
}

impl From<ConfigError> for SettingsError {
    fn from(e: ConfigError) -> Self {
        SettingsError::Config(Box::new(e))
    }
}

/// Everything the game loop reads from the config besides the search
/// parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaySettings {
    /// `numGameThreads`: games played at once.
    pub num_game_threads: usize,
    /// `maxMovesPerGame`.
    pub max_moves_per_game: usize,
    /// `dataBoardLen`: side of the data board rows are laid out on.
    pub data_board_len: usize,
    /// `maxRowsPerTrainFile`.
    pub max_rows_per_train_file: usize,
    /// `maxVisits` of a full search.
    pub max_visits: i64,
    /// `cheapSearchProb`, `cheapSearchVisits`, `cheapSearchTargetWeight`.
    pub cheap_search_prob: f64,
    /// Visits of a cheap search.
    pub cheap_search_visits: i64,
    /// Row weight of a cheap search.
    pub cheap_search_target_weight: f64,
    /// `reduceVisits` and its thresholds.
    pub reduce_visits: bool,
    /// `reduceVisitsThreshold`.
    pub reduce_visits_threshold: f64,
    /// `reduceVisitsThresholdLookback`.
    pub reduce_visits_threshold_lookback: usize,
    /// `reducedVisitsMin`.
    pub reduced_visits_min: i64,
    /// `reducedVisitsWeight`.
    pub reduced_visits_weight: f64,
    /// `policySurpriseDataWeight`.
    pub policy_surprise_data_weight: f64,
    /// `valueSurpriseDataWeight`.
    pub value_surprise_data_weight: f64,
    /// `bSizesXY` (or `bSizes`, square) with `bSizeRelProbs`.
    pub board_sizes: Vec<(usize, usize)>,
    /// Relative probabilities of `board_sizes`.
    pub board_size_rel_probs: Vec<f64>,
    /// `koRules`, `scoringRules`, ...: the lists each game's rules are
    /// drawn from.
    pub rules: RuleLists,
    /// `komiMean`: the komi before the random spread (unless `komiAuto`).
    pub komi_mean: f64,
    /// `komiAuto`: start from the net's fair komi for the empty board.
    pub komi_auto: bool,
    /// `compensateKomiVisits`: visits per search when finding fair komi.
    pub compensate_komi_visits: i64,
    /// `komiStdev`.
    pub komi_stdev: f64,
    /// `komiBigStdevProb`.
    pub komi_big_stdev_prob: f64,
    /// `komiBigStdev`.
    pub komi_big_stdev: f64,
    /// `initGamesWithPolicy`.
    pub init_games_with_policy: bool,
    /// `policyInitAreaProp`: mean number of opening moves from the policy
    /// as a share of the board area.
    pub policy_init_area_prop: f64,
    /// `drawRandRadius`: each game's draw value is drawn uniformly within
    /// this radius of `drawEquivalentWinsForWhite`, redrawn until in [0, 1].
    pub draw_rand_radius: f64,
    /// `maxAsymmetricRatio`: the largest visit ratio between the sides of
    /// an asymmetric game (clamped so the weaker side keeps 5 visits).
    pub max_asymmetric_ratio: f64,
    /// `handicapProb`: chance of a handicap game (boards above 10x10, or
    /// any board with `numExtraBlackFixed`).
    pub handicap_prob: f64,
    /// `numExtraBlackFixed`: the number of extra black stones of a handicap
    /// game (0: 1 to KataGo's size-dependent maximum).
    pub num_extra_black_fixed: u32,
    /// `handicapCompensateKomiProb`: chance a handicap game's komi is made
    /// fair for the position with its stones.
    pub handicap_compensate_komi_prob: f64,
    /// `handicapTemperature`: policy temperature for placing the stones.
    pub handicap_temperature: f64,
    /// `normalAsymmetricPlayoutProb`: chance of an asymmetric-playout game
    /// without handicap.
    pub normal_asymmetric_playout_prob: f64,
    /// `handicapAsymmetricPlayoutProb`: the same for handicap games.
    pub handicap_asymmetric_playout_prob: f64,
    /// `minAsymmetricCompensateKomiProb`: least chance an asymmetric game's
    /// komi is made fair for its start position.
    pub min_asymmetric_compensate_komi_prob: f64,
    /// `noResultStdev`: spread of the per-game no-result utility for white
    /// around the search's `noResultUtilityForWhite`.
    pub no_result_stdev: f64,
    /// `fancyKomiVarying`: half of the handicap games without fair komi get
    /// a komi drawn between the drawn and the fair one, plus noise.
    pub fancy_komi_varying: bool,
    /// `sidePositionProb`: chance per recorded turn of also searching a
    /// position one odd move away (rows without game-outcome targets).
    pub side_position_prob: f64,
    /// `earlyForkGameProb`: chance a finished game is forked near its start.
    pub early_fork_game_prob: f64,
    /// `earlyForkGameExpectedMoveProp`: mean fork move of an early fork, as
    /// a share of the board area.
    pub early_fork_game_expected_move_prop: f64,
    /// `forkGameProb`: chance (when not forked early) of a fork at any move.
    pub fork_game_prob: f64,
    /// `forkGameMinChoices`: fewest random moves the net picks a fork from.
    pub fork_game_min_choices: usize,
    /// `earlyForkGameMaxChoices`: most choices for an early fork.
    pub early_fork_game_max_choices: usize,
    /// `forkGameMaxChoices`: most choices for a late fork.
    pub fork_game_max_choices: usize,
    /// `forkCompensateKomiProb`: chance a fork game's komi is made fair.
    pub fork_compensate_komi_prob: f64,
    /// `sekiForkHackProb`: chance a game without a fork position starts
    /// from a seki fork (the end of a finished game with unowned points,
    /// its scoring and tax rules redrawn).
    pub seki_fork_hack_prob: f64,
    /// `compensateAfterPolicyInitProb`: chance an even game's komi is made
    /// fair again after its opening moves from the policy.
    pub compensate_after_policy_init_prob: f64,
    /// `estimateLeadProb`: chance per recorded turn of estimating White's
    /// lead by searches at several komis (the row's lead target).
    pub estimate_lead_prob: f64,
    /// `estimateLeadVisits`: visits of each of those searches.
    pub estimate_lead_visits: i64,
    /// `switchNetsMidGame`: a game in progress moves to a newer model (its
    /// rows then go to the newer model's folder, as KataGo writes them).
    pub switch_nets_mid_game: bool,
    /// `komiAllowIntegerProb`: chance a game may have an integer komi
    /// (otherwise an integer komi is moved half a point at random).
    pub komi_allow_integer_prob: f64,
}

pub(crate) fn parse_list<T>(
    cfg: &Config,
    key: &str,
    default: &[&str],
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, SettingsError> {
    let items: Vec<String> = if cfg.contains(key) {
        // A single number (`bSizes = 9` as an override) reads as a number.
        match cfg.get_strings(key) {
            Ok(items) => items,
            Err(e) => match cfg.get_i64s(key, i64::MIN..=i64::MAX) {
                Ok(ns) => ns.iter().map(|n| n.to_string()).collect(),
                Err(_) => return Err(e.into()),
            },
        }
    } else {
        default.iter().map(|s| s.to_string()).collect()
    };
    let mut out = Vec::new();
    for item in &items {
        out.push(
            parse(item.trim())
                .ok_or_else(|| SettingsError::Invalid(format!("{key}: cannot read '{item}'")))?,
        );
    }
    if out.is_empty() {
        return Err(SettingsError::Invalid(format!("{key}: empty list")));
    }
    Ok(out)
}

pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// The lists a game's rules are drawn from, one item of each per game
/// (KataGo's self-play and match keys `koRules`, `scoringRules`,
/// `taxRules`, `multiStoneSuicideLegals`, `hasButtons`).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleLists {
    /// `koRules` (default `POSITIONAL`).
    pub ko_rules: Vec<KoRule>,
    /// `scoringRules` (default `AREA`).
    pub scoring_rules: Vec<ScoringRule>,
    /// `taxRules` (default `NONE`).
    pub tax_rules: Vec<TaxRule>,
    /// `multiStoneSuicideLegals` (default `false`).
    pub multi_stone_suicide_legals: Vec<bool>,
    /// `hasButtons` (default `false`; a button only under area scoring).
    pub has_buttons: Vec<bool>,
}

impl RuleLists {
    /// Reads the five lists (upper or lower case).
    pub fn from_config(cfg: &Config) -> Result<RuleLists, SettingsError> {
        Ok(RuleLists {
            ko_rules: parse_list(cfg, "koRules", &["POSITIONAL"], |s| {
                KoRule::parse(&s.to_ascii_uppercase())
            })?,
            scoring_rules: parse_list(cfg, "scoringRules", &["AREA"], |s| {
                ScoringRule::parse(&s.to_ascii_uppercase())
            })?,
            tax_rules: parse_list(cfg, "taxRules", &["NONE"], |s| {
                TaxRule::parse(&s.to_ascii_uppercase())
            })?,
            multi_stone_suicide_legals: parse_list(
                cfg,
                "multiStoneSuicideLegals",
                &["false"],
                parse_bool,
            )?,
            has_buttons: parse_list(cfg, "hasButtons", &["false"], parse_bool)?,
        })
    }

    /// One rule set drawn from the lists, in KataGo's order (ko, scoring,
    /// tax, suicide, button); the rest is Tromp-Taylor's, with no
    /// handicap bonus for White. Komi is the caller's.
    pub fn draw(&self, rng: &mut impl Rng) -> Rules {
        let mut rules = Rules::tromp_taylor();
        rules.ko_rule = pick(&self.ko_rules, rng);
        rules.scoring_rule = pick(&self.scoring_rules, rng);
        rules.tax_rule = pick(&self.tax_rules, rng);
        rules.multi_stone_suicide_legal = pick(&self.multi_stone_suicide_legals, rng);
        rules.has_button = pick(&self.has_buttons, rng) && rules.scoring_rule == ScoringRule::Area;
        rules.white_handicap_bonus_rule = WhiteHandicapBonusRule::Zero;
        rules
    }

    /// Draws scoring, tax and button again (KataGo's forks of a finished
    /// game keep its ko and suicide rules); the button is drawn only under
    /// area scoring.
    pub fn redraw_scoring(&self, rules: &mut Rules, rng: &mut impl Rng) {
        rules.scoring_rule = pick(&self.scoring_rules, rng);
        rules.tax_rule = pick(&self.tax_rules, rng);
        rules.has_button = rules.scoring_rule == ScoringRule::Area && pick(&self.has_buttons, rng);
    }
}

/// A uniformly drawn item of a non-empty list.
fn pick<T: Copy>(items: &[T], rng: &mut impl Rng) -> T {
    items[rng.gen_range(0..items.len())]
}

/// KataGo's `allowRectangleProb` over square sizes: each square keeps
/// `(1 - p)` of its weight and every pair of edges `(x, y)` gets
/// `p * w_x * w_y` (weights normalised), so rectangles appear with total
/// probability `p` minus the squares among the pairs.
fn with_rectangles(
    sizes: Vec<(usize, usize)>,
    probs: Vec<f64>,
    allow_rectangle_prob: f64,
) -> (Vec<(usize, usize)>, Vec<f64>) {
    if allow_rectangle_prob <= 0.0 || sizes.iter().any(|&(x, y)| x != y) {
        return (sizes, probs);
    }
    let sum: f64 = probs.iter().sum();
    let p = allow_rectangle_prob;
    let mut out_sizes = Vec::new();
    let mut out_probs = Vec::new();
    for (i, &(x, _)) in sizes.iter().enumerate() {
        for (j, &(y, _)) in sizes.iter().enumerate() {
            let pair = p * probs[i] * probs[j] / sum / sum;
            out_sizes.push((x, y));
            out_probs.push(if i == j {
                (1.0 - p) * probs[i] / sum + pair
            } else {
                pair
            });
        }
    }
    (out_sizes, out_probs)
}

impl PlaySettings {
    /// Reads the settings, with KataGo's `selfplay1.cfg` values as
    /// defaults. Warnings (values adjusted so the run can go on) are
    /// returned beside the settings.
    pub fn from_config(cfg: &Config) -> Result<(PlaySettings, Vec<String>), SettingsError> {
        let mut warnings = Vec::new();
        let max_visits = cfg.get_i64_or("maxVisits", 600, 1..=(1 << 40))?;
        let cheap_search_visits = cfg.get_i64_or("cheapSearchVisits", 100, 1..=(1 << 40))?;
        let reduced_visits_min = cfg.get_i64_or("reducedVisitsMin", 100, 1..=(1 << 40))?;
        if cheap_search_visits > max_visits {
            return Err(SettingsError::Invalid(format!(
                "cheapSearchVisits ({cheap_search_visits}) > maxVisits ({max_visits})"
            )));
        }
        if reduced_visits_min > max_visits {
            return Err(SettingsError::Invalid(format!(
                "reducedVisitsMin ({reduced_visits_min}) > maxVisits ({max_visits})"
            )));
        }
        if cfg.contains("bSizesXY") && cfg.contains("allowRectangleProb") {
            return Err(SettingsError::Invalid(
                "cannot give allowRectangleProb with bSizesXY: set the rectangles' weights in bSizeRelProbs".into(),
            ));
        }
        let sizes: Vec<(usize, usize)> = if cfg.contains("bSizesXY") {
            parse_list(cfg, "bSizesXY", &[], |s| {
                let (x, y) = s.split_once('-')?;
                Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
            })?
        } else {
            parse_list(cfg, "bSizes", &["9", "13", "19"], |s| {
                let n: usize = s.parse().ok()?;
                Some((n, n))
            })?
        };
        let probs = if cfg.contains("bSizeRelProbs") {
            cfg.get_f64s("bSizeRelProbs", 0.0..=1e12)?
        } else {
            vec![1.0; sizes.len()]
        };
        if probs.len() != sizes.len() || probs.iter().sum::<f64>() <= 0.0 {
            return Err(SettingsError::Invalid(format!(
                "bSizeRelProbs must give one non-negative weight per board size ({} sizes, {} weights), not all zero",
                sizes.len(),
                probs.len()
            )));
        }
        let (sizes, probs) = with_rectangles(
            sizes,
            probs,
            cfg.get_f64_or("allowRectangleProb", 0.0, 0.0..=1.0)?,
        );
        let data_board_len = cfg.get_i64_or("dataBoardLen", 19, 2..=19)? as usize;
        for &(x, y) in &sizes {
            if !(2..=data_board_len).contains(&x) || !(2..=data_board_len).contains(&y) {
                return Err(SettingsError::Invalid(format!(
                    "board size {x}x{y} does not fit dataBoardLen = {data_board_len}"
                )));
            }
        }
        // As KataGo: exactly one of a fixed komi and the net's fair komi.
        let komi_auto = cfg.get_bool_or("komiAuto", false)?;
        if komi_auto == cfg.contains("komiMean") {
            return Err(SettingsError::Invalid(
                "specify exactly one of komiMean = <komi> or komiAuto = true".into(),
            ));
        }
        let max_asymmetric_ratio = cfg.get_f64_or("maxAsymmetricRatio", 2.0, 1.0..=1e6)?;
        // KataGo 1.17.2 aborts the whole run when asymmetric doubling leaves
        // the weaker side fewer than 5 visits; warn and clamp instead.
        let min_side = max_visits as f64 / max_asymmetric_ratio;
        let max_asymmetric_ratio = if min_side < 5.0 {
            let clamped = (max_visits as f64 / 5.0).max(1.0);
            warnings.push(format!(
                "maxAsymmetricRatio = {max_asymmetric_ratio} would leave fewer than 5 visits with maxVisits = {max_visits}; using {clamped}"
            ));
            clamped
        } else {
            max_asymmetric_ratio
        };
        let s = PlaySettings {
            num_game_threads: cfg.get_i64_or("numGameThreads", 1, 1..=100_000)? as usize,
            max_moves_per_game: cfg.get_i64_or("maxMovesPerGame", 1600, 1..=100_000)? as usize,
            data_board_len,
            max_rows_per_train_file: cfg.get_i64_or(
                "maxRowsPerTrainFile",
                20000,
                1..=100_000_000,
            )? as usize,
            max_visits,
            cheap_search_prob: cfg.get_f64_or("cheapSearchProb", 0.0, 0.0..=1.0)?,
            cheap_search_visits,
            cheap_search_target_weight: cfg.get_f64_or(
                "cheapSearchTargetWeight",
                0.0,
                0.0..=1.0,
            )?,
            reduce_visits: cfg.get_bool_or("reduceVisits", false)?,
            reduce_visits_threshold: cfg.get_f64_or("reduceVisitsThreshold", 0.9, 0.0..=1.0)?,
            reduce_visits_threshold_lookback: cfg.get_i64_or(
                "reduceVisitsThresholdLookback",
                3,
                0..=1000,
            )? as usize,
            reduced_visits_min,
            reduced_visits_weight: cfg.get_f64_or("reducedVisitsWeight", 0.1, 0.0..=1.0)?,
            policy_surprise_data_weight: cfg.get_f64_or(
                "policySurpriseDataWeight",
                0.0,
                0.0..=1.0,
            )?,
            value_surprise_data_weight: cfg.get_f64_or(
                "valueSurpriseDataWeight",
                0.0,
                0.0..=1.0,
            )?,
            board_sizes: sizes,
            board_size_rel_probs: probs,
            rules: RuleLists::from_config(cfg)?,
            komi_mean: cfg.get_f64_or("komiMean", 7.5, -150.0..=150.0)?,
            komi_auto,
            compensate_komi_visits: cfg.get_i64_or("compensateKomiVisits", 100, 1..=10000)?,
            komi_stdev: cfg.get_f64_or("komiStdev", 0.0, 0.0..=1000.0)?,
            komi_big_stdev_prob: cfg.get_f64_or("komiBigStdevProb", 0.0, 0.0..=1.0)?,
            komi_big_stdev: cfg.get_f64_or("komiBigStdev", 10.0, 0.0..=1000.0)?,
            init_games_with_policy: cfg.get_bool_or("initGamesWithPolicy", false)?,
            policy_init_area_prop: cfg.get_f64_or("policyInitAreaProp", 0.0, 0.0..=1.0)?,
            draw_rand_radius: cfg.get_f64_or("drawRandRadius", 0.0, 0.0..=1.0)?,
            no_result_stdev: cfg.get_f64_or("noResultStdev", 0.0, 0.0..=1.0)?,
            fancy_komi_varying: cfg.get_bool_or("fancyKomiVarying", false)?,
            side_position_prob: cfg.get_f64_or("sidePositionProb", 0.0, 0.0..=1.0)?,
            early_fork_game_prob: cfg.get_f64_or("earlyForkGameProb", 0.0, 0.0..=0.5)?,
            early_fork_game_expected_move_prop: cfg.get_f64_or(
                "earlyForkGameExpectedMoveProp",
                0.0,
                0.0..=1.0,
            )?,
            fork_game_prob: cfg.get_f64_or("forkGameProb", 0.0, 0.0..=0.5)?,
            fork_game_min_choices: cfg.get_i64_or("forkGameMinChoices", 1, 1..=361)? as usize,
            early_fork_game_max_choices: cfg.get_i64_or("earlyForkGameMaxChoices", 1, 1..=361)?
                as usize,
            fork_game_max_choices: cfg.get_i64_or("forkGameMaxChoices", 1, 1..=361)? as usize,
            fork_compensate_komi_prob: cfg.get_f64_or("forkCompensateKomiProb", 0.0, 0.0..=1.0)?,
            seki_fork_hack_prob: cfg.get_f64_or("sekiForkHackProb", 0.0, 0.0..=1.0)?,
            compensate_after_policy_init_prob: cfg.get_f64_or(
                "compensateAfterPolicyInitProb",
                0.0,
                0.0..=1.0,
            )?,
            estimate_lead_prob: cfg.get_f64_or("estimateLeadProb", 0.0, 0.0..=1.0)?,
            estimate_lead_visits: cfg.get_i64_or("estimateLeadVisits", 6, 1..=10000)?,
            switch_nets_mid_game: cfg.get_bool_or("switchNetsMidGame", false)?,
            komi_allow_integer_prob: cfg.get_f64_or("komiAllowIntegerProb", 1.0, 0.0..=1.0)?,
            max_asymmetric_ratio,
            handicap_prob: cfg.get_f64_or("handicapProb", 0.0, 0.0..=1.0)?,
            num_extra_black_fixed: cfg.get_i64_or("numExtraBlackFixed", 0, 0..=18)? as u32,
            handicap_compensate_komi_prob: cfg.get_f64_or(
                "handicapCompensateKomiProb",
                0.0,
                0.0..=1.0,
            )?,
            handicap_temperature: cfg.get_f64_or("handicapTemperature", 1.0, 0.1..=5.0)?,
            normal_asymmetric_playout_prob: cfg.get_f64_or(
                "normalAsymmetricPlayoutProb",
                0.0,
                0.0..=1.0,
            )?,
            handicap_asymmetric_playout_prob: cfg.get_f64_or(
                "handicapAsymmetricPlayoutProb",
                0.0,
                0.0..=1.0,
            )?,
            min_asymmetric_compensate_komi_prob: cfg.get_f64_or(
                "minAsymmetricCompensateKomiProb",
                0.0,
                0.0..=1.0,
            )?,
        };
        if s.policy_surprise_data_weight + s.value_surprise_data_weight > 1.0 {
            return Err(SettingsError::Invalid(
                "policySurpriseDataWeight + valueSurpriseDataWeight > 1".into(),
            ));
        }
        Ok((s, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_katago_cfg_lists_and_clamps_asymmetry() {
        let cfg = Config::from_cfg_str(
            "komiMean = 7\nmaxVisits = 32\ncheapSearchVisits = 12\nreducedVisitsMin = 12\nmaxAsymmetricRatio = 8.0\n\
             bSizesXY = 7-7, 9-13\nbSizeRelProbs = 1, 3\nkoRules = SIMPLE,POSITIONAL\n\
             multiStoneSuicideLegals = false,true\n",
            "t.cfg",
        )
        .unwrap();
        let (s, warnings) = PlaySettings::from_config(&cfg).unwrap();
        assert_eq!(s.board_sizes, vec![(7, 7), (9, 13)]);
        assert_eq!(s.rules.ko_rules, vec![KoRule::Simple, KoRule::Positional]);
        assert_eq!(s.rules.multi_stone_suicide_legals, vec![false, true]);
        assert_eq!(s.max_asymmetric_ratio, 32.0 / 5.0);
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn allow_rectangle_prob_adds_rectangles_as_katago() {
        let cfg = Config::from_cfg_str(
            "komiMean = 7\nbSizes = 7,9\nbSizeRelProbs = 1,3\nallowRectangleProb = 0.2\n",
            "t.cfg",
        )
        .unwrap();
        let (s, _) = PlaySettings::from_config(&cfg).unwrap();
        assert_eq!(s.board_sizes, vec![(7, 7), (7, 9), (9, 7), (9, 9)]);
        let want = [
            0.8 * 0.25 + 0.2 * 0.25 * 0.25,
            0.2 * 0.25 * 0.75,
            0.2 * 0.75 * 0.25,
            0.8 * 0.75 + 0.2 * 0.75 * 0.75,
        ];
        for (got, want) in s.board_size_rel_probs.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
        assert!((s.board_size_rel_probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Without it, squares only; with bSizesXY it is an error (KataGo's rule).
        let cfg = Config::from_cfg_str("komiMean = 7\nbSizes = 7,9\n", "t.cfg").unwrap();
        assert_eq!(
            PlaySettings::from_config(&cfg).unwrap().0.board_sizes,
            vec![(7, 7), (9, 9)]
        );
        let cfg = Config::from_cfg_str(
            "komiMean = 7\nbSizesXY = 7-9\nallowRectangleProb = 0.1\n",
            "t.cfg",
        )
        .unwrap();
        assert!(PlaySettings::from_config(&cfg).is_err());
    }

    #[test]
    fn needs_exactly_one_komi_source() {
        for text in ["logMoves = false\n", "komiMean = 7\nkomiAuto = true\n"] {
            let cfg = Config::from_cfg_str(text, "t.cfg").unwrap();
            let err = PlaySettings::from_config(&cfg).unwrap_err().to_string();
            assert!(err.contains("komiAuto"), "{err}");
        }
    }

    #[test]
    fn rejects_sizes_beyond_the_data_board() {
        let cfg = Config::from_cfg_str("komiMean = 7\nbSizes = 9,21\n", "t.cfg").unwrap();
        let err = PlaySettings::from_config(&cfg).unwrap_err().to_string();
        assert!(err.contains("21") || err.contains("bSizes"), "{err}");
    }
}
