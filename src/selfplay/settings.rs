//! Self-play settings read from a config with KataGo's key names and
//! defaults (`cpp/configs/training/selfplay1.cfg`, `PlaySettings` and
//! `GameInitializer` in `cpp/program/play.cpp`).

use crate::config::Config;
use crate::config::{read_fields, Field, Key};
use crate::game::MAX_LEN;
use crate::play::{parse_list, RuleLists, SettingsError};

/// Everything the game loop reads from the config besides the search
/// parameters. `Default` is the all-zero value that
/// [`PlaySettings::from_config`] starts from, not a playable setting.
#[derive(Debug, Clone, PartialEq, Default)]
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
    /// Each game's search tree share of `maxMemoryMB` (split over the game
    /// threads), if set.
    pub tree_memory_limit: Option<u64>,
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

/// The scalar settings of self-play: KataGo's key, its `selfplay1.cfg`
/// default, its range, and the field it fills.
const PLAY_FIELDS: &[Field<PlaySettings>] = &[
    Field::i64("numGameThreads", 1, 1..=100_000, |s, v| {
        s.num_game_threads = v as usize
    }),
    Field::i64("maxMovesPerGame", 1600, 1..=100_000, |s, v| {
        s.max_moves_per_game = v as usize
    }),
    Field::i64("dataBoardLen", 19, 2..=MAX_LEN as i64, |s, v| {
        s.data_board_len = v as usize
    }),
    Field::i64("maxRowsPerTrainFile", 20000, 1..=100_000_000, |s, v| {
        s.max_rows_per_train_file = v as usize
    }),
    Field::i64("maxVisits", 600, 1..=(1 << 40), |s, v| s.max_visits = v),
    Field::f64("cheapSearchProb", 0.0, 0.0..=1.0, |s, v| {
        s.cheap_search_prob = v
    }),
    Field::i64("cheapSearchVisits", 100, 1..=(1 << 40), |s, v| {
        s.cheap_search_visits = v
    }),
    Field::f64("cheapSearchTargetWeight", 0.0, 0.0..=1.0, |s, v| {
        s.cheap_search_target_weight = v
    }),
    Field::bool("reduceVisits", false, |s, v| s.reduce_visits = v),
    Field::f64("reduceVisitsThreshold", 0.9, 0.0..=1.0, |s, v| {
        s.reduce_visits_threshold = v
    }),
    Field::i64("reduceVisitsThresholdLookback", 3, 0..=1000, |s, v| {
        s.reduce_visits_threshold_lookback = v as usize
    }),
    Field::i64("reducedVisitsMin", 100, 1..=(1 << 40), |s, v| {
        s.reduced_visits_min = v
    }),
    Field::f64("reducedVisitsWeight", 0.1, 0.0..=1.0, |s, v| {
        s.reduced_visits_weight = v
    }),
    Field::f64("policySurpriseDataWeight", 0.0, 0.0..=1.0, |s, v| {
        s.policy_surprise_data_weight = v
    }),
    Field::f64("valueSurpriseDataWeight", 0.0, 0.0..=1.0, |s, v| {
        s.value_surprise_data_weight = v
    }),
    Field::f64("komiMean", 7.5, -150.0..=150.0, |s, v| s.komi_mean = v),
    Field::bool("komiAuto", false, |s, v| s.komi_auto = v),
    Field::i64("compensateKomiVisits", 100, 1..=10000, |s, v| {
        s.compensate_komi_visits = v
    }),
    Field::f64("komiStdev", 0.0, 0.0..=1000.0, |s, v| s.komi_stdev = v),
    Field::f64("komiBigStdevProb", 0.0, 0.0..=1.0, |s, v| {
        s.komi_big_stdev_prob = v
    }),
    Field::f64("komiBigStdev", 10.0, 0.0..=1000.0, |s, v| {
        s.komi_big_stdev = v
    }),
    Field::bool("initGamesWithPolicy", false, |s, v| {
        s.init_games_with_policy = v
    }),
    Field::f64("policyInitAreaProp", 0.0, 0.0..=1.0, |s, v| {
        s.policy_init_area_prop = v
    }),
    Field::f64("drawRandRadius", 0.0, 0.0..=1.0, |s, v| {
        s.draw_rand_radius = v
    }),
    Field::f64("noResultStdev", 0.0, 0.0..=1.0, |s, v| {
        s.no_result_stdev = v
    }),
    Field::bool("fancyKomiVarying", false, |s, v| s.fancy_komi_varying = v),
    Field::f64("sidePositionProb", 0.0, 0.0..=1.0, |s, v| {
        s.side_position_prob = v
    }),
    Field::f64("earlyForkGameProb", 0.0, 0.0..=0.5, |s, v| {
        s.early_fork_game_prob = v
    }),
    Field::f64("earlyForkGameExpectedMoveProp", 0.0, 0.0..=1.0, |s, v| {
        s.early_fork_game_expected_move_prop = v
    }),
    Field::f64("forkGameProb", 0.0, 0.0..=0.5, |s, v| s.fork_game_prob = v),
    Field::i64("forkGameMinChoices", 1, 1..=361, |s, v| {
        s.fork_game_min_choices = v as usize
    }),
    Field::i64("earlyForkGameMaxChoices", 1, 1..=361, |s, v| {
        s.early_fork_game_max_choices = v as usize
    }),
    Field::i64("forkGameMaxChoices", 1, 1..=361, |s, v| {
        s.fork_game_max_choices = v as usize
    }),
    Field::f64("forkCompensateKomiProb", 0.0, 0.0..=1.0, |s, v| {
        s.fork_compensate_komi_prob = v
    }),
    Field::f64("sekiForkHackProb", 0.0, 0.0..=1.0, |s, v| {
        s.seki_fork_hack_prob = v
    }),
    Field::f64("compensateAfterPolicyInitProb", 0.0, 0.0..=1.0, |s, v| {
        s.compensate_after_policy_init_prob = v
    }),
    Field::f64("estimateLeadProb", 0.0, 0.0..=1.0, |s, v| {
        s.estimate_lead_prob = v
    }),
    Field::i64("estimateLeadVisits", 6, 1..=10000, |s, v| {
        s.estimate_lead_visits = v
    }),
    Field::bool("switchNetsMidGame", false, |s, v| {
        s.switch_nets_mid_game = v
    }),
    Field::f64("komiAllowIntegerProb", 1.0, 0.0..=1.0, |s, v| {
        s.komi_allow_integer_prob = v
    }),
    Field::f64("maxAsymmetricRatio", 2.0, 1.0..=1e6, |s, v| {
        s.max_asymmetric_ratio = v
    }),
    Field::f64("handicapProb", 0.0, 0.0..=1.0, |s, v| s.handicap_prob = v),
    Field::i64("numExtraBlackFixed", 0, 0..=18, |s, v| {
        s.num_extra_black_fixed = v as u32
    }),
    Field::f64("handicapCompensateKomiProb", 0.0, 0.0..=1.0, |s, v| {
        s.handicap_compensate_komi_prob = v
    }),
    Field::f64("handicapTemperature", 1.0, 0.1..=5.0, |s, v| {
        s.handicap_temperature = v
    }),
    Field::f64("normalAsymmetricPlayoutProb", 0.0, 0.0..=1.0, |s, v| {
        s.normal_asymmetric_playout_prob = v
    }),
    Field::f64("handicapAsymmetricPlayoutProb", 0.0, 0.0..=1.0, |s, v| {
        s.handicap_asymmetric_playout_prob = v
    }),
    Field::f64("minAsymmetricCompensateKomiProb", 0.0, 0.0..=1.0, |s, v| {
        s.min_asymmetric_compensate_komi_prob = v
    }),
];

/// The configuration reference's rows of self-play's settings tables.
pub fn config_rows() -> Vec<crate::config::Row> {
    let mut rows = crate::config::field_rows(PLAY_FIELDS);
    rows.extend(
        [
            DATA_QUEUE_SIZE.setting(),
            LOG_GAMES_EVERY.setting(),
            SIZE_REL_PROBS.setting(),
            RECTANGLE_PROB.setting(),
        ]
        .iter()
        .map(|s| s.row()),
    );
    rows
}

/// `maxDataQueueSize` (KataGo's default).
pub const DATA_QUEUE_SIZE: Key<i64> = Key::int("maxDataQueueSize", 2000, 1..=1_000_000)
    .doc("Finished games waiting for the writer, at most.");
/// `logGamesEvery`.
pub(crate) const LOG_GAMES_EVERY: Key<i64> =
    Key::int("logGamesEvery", 10, 1..=i64::MAX).doc("A progress line every this many games.");
/// `bSizeRelProbs`.
const SIZE_REL_PROBS: Key<Option<Vec<f64>>> =
    Key::reals("bSizeRelProbs", "1 for each size", 0.0..=1e12)
        .doc("The weight of each board size of bSizes (or bSizesXY) in the draw.");
/// `allowRectangleProb`.
const RECTANGLE_PROB: Key<f64> = Key::real("allowRectangleProb", 0.0, 0.0..=1.0)
    .doc("The chance that a drawn square size becomes a rectangle (not with bSizesXY).");

impl PlaySettings {
    /// The keys self-play reads, scalar and list.
    pub fn keys() -> impl Iterator<Item = &'static str> {
        PLAY_FIELDS
            .iter()
            .map(Field::key)
            .chain(LIST_KEYS.iter().copied())
    }

    /// Reads the settings, with KataGo's `selfplay1.cfg` values as
    /// defaults. Warnings (values adjusted so the run can go on) are
    /// returned beside the settings.
    pub fn from_config(cfg: &Config) -> Result<(PlaySettings, Vec<String>), SettingsError> {
        let mut s = PlaySettings::default();
        read_fields(cfg, PLAY_FIELDS, &mut s)?;
        s.tree_memory_limit =
            crate::setup::MemoryBudget::tree_share(cfg, s.num_game_threads.max(1))?;
        let mut warnings = Vec::new();
        let invalid = |why: String| Err(SettingsError::Invalid(why));
        let max_visits = s.max_visits;
        if s.cheap_search_visits > max_visits {
            return invalid(format!(
                "cheapSearchVisits ({}) > maxVisits ({max_visits})",
                s.cheap_search_visits
            ));
        }
        if s.reduced_visits_min > max_visits {
            return invalid(format!(
                "reducedVisitsMin ({}) > maxVisits ({max_visits})",
                s.reduced_visits_min
            ));
        }
        (s.board_sizes, s.board_size_rel_probs) = board_sizes(cfg, s.data_board_len)?;
        s.rules = RuleLists::from_config(cfg)?;
        // As KataGo: exactly one of a fixed komi and the net's fair komi.
        if s.komi_auto == cfg.contains("komiMean") {
            return invalid("specify exactly one of komiMean = <komi> or komiAuto = true".into());
        }
        // KataGo 1.17.2 aborts the whole run when asymmetric doubling leaves
        // the weaker side fewer than 5 visits; warn and clamp instead.
        if max_visits as f64 / s.max_asymmetric_ratio < 5.0 {
            let clamped = (max_visits as f64 / 5.0).max(1.0);
            warnings.push(format!(
                "maxAsymmetricRatio = {} would leave fewer than 5 visits with maxVisits = {max_visits}; using {clamped}",
                s.max_asymmetric_ratio
            ));
            s.max_asymmetric_ratio = clamped;
        }
        if s.policy_surprise_data_weight + s.value_surprise_data_weight > 1.0 {
            return invalid("policySurpriseDataWeight + valueSurpriseDataWeight > 1".into());
        }
        Ok((s, warnings))
    }
}

/// The list keys self-play reads besides [`PLAY_FIELDS`].
const LIST_KEYS: &[&str] = &[
    "bSizes",
    "bSizesXY",
    "bSizeRelProbs",
    "allowRectangleProb",
    "koRules",
    "scoringRules",
    "taxRules",
    "multiStoneSuicideLegals",
    "hasButtons",
];

/// Board sizes `(x, y)` and their relative weights.
type SizesAndWeights = (Vec<(usize, usize)>, Vec<f64>);

/// `bSizesXY` (or `bSizes`, square) with `bSizeRelProbs` and
/// `allowRectangleProb`, each size checked to fit `data_board_len`.
fn board_sizes(cfg: &Config, data_board_len: usize) -> Result<SizesAndWeights, SettingsError> {
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
    let probs = SIZE_REL_PROBS
        .read(cfg)?
        .unwrap_or_else(|| vec![1.0; sizes.len()]);
    if probs.len() != sizes.len() || probs.iter().sum::<f64>() <= 0.0 {
        return Err(SettingsError::Invalid(format!(
            "bSizeRelProbs must give one non-negative weight per board size ({} sizes, {} weights), not all zero",
            sizes.len(),
            probs.len()
        )));
    }
    let (sizes, probs) = with_rectangles(sizes, probs, RECTANGLE_PROB.read(cfg)?);
    for &(x, y) in &sizes {
        if !(2..=data_board_len).contains(&x) || !(2..=data_board_len).contains(&y) {
            return Err(SettingsError::Invalid(format!(
                "board size {x}x{y} does not fit dataBoardLen = {data_board_len}"
            )));
        }
    }
    Ok((sizes, probs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::KoRule;

    #[test]
    fn the_table_reads_each_known_key_once() {
        let keys: Vec<&str> = PlaySettings::keys().collect();
        for key in &keys {
            assert!(
                crate::config::is_known_key(key),
                "{key} is not a KataGo key"
            );
        }
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len(), "a key is read twice: {keys:?}");
    }

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
