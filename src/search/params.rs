//! [`SearchParams`]: every search parameter under KataGo's config key,
//! KataGo's defaults per program ([`SetupFor`]), and overrides by name with
//! KataGo's value ranges (GTP `kata-set-param`, analysis `overrideSettings`,
//! config files).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::game::Player;
use crate::nn::SgfMetadata;
use crate::timecontrol::TimeParams;

/// Which program the parameters are for: KataGo picks different defaults
/// for some parameters depending on it (`Setup::loadParams`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupFor {
    /// `engine gtp`.
    Gtp,
    /// `engine analysis`.
    Analysis,
    /// `engine benchmark`.
    Benchmark,
    /// Engine-vs-engine matches.
    Match,
    /// Self-play and everything else (KataGo's `SETUP_FOR_OTHER`).
    Other,
    /// KataGo's distributed self-play client defaults.
    Distributed,
}

/// A tri-state switch as KataGo's `enabled_t`: `auto`, `true` or `false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Enabled {
    /// Decided from the network (see the parameter's doc).
    Auto,
    True,
    False,
}

/// Why an override could not be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No parameter has this name.
    #[error("unknown search parameter: {0:?}")]
    Unknown(String),
    /// The value has the wrong type (e.g. a string for a number).
    #[error("search parameter {name}: expected {expected}, got {got}")]
    BadType {
        name: String,
        expected: &'static str,
        got: String,
    },
    /// The value is outside the range KataGo accepts.
    #[error("search parameter {name}: {value} is outside [{min}, {max}]")]
    OutOfRange {
        name: String,
        value: f64,
        min: f64,
        max: f64,
    },
    /// The value is of the right type but means nothing (its own message).
    #[error("search parameter {name}: {why}")]
    Invalid { name: String, why: String },
}

/// A value that an override can set: parsed from JSON (numbers, booleans,
/// and the strings a config file or GTP command gives, e.g. `"0.5"`,
/// `"true"`), checked against a range.
trait ParamValue: Sized {
    /// The type as the configuration reference names it.
    const TYPE: &'static str;
    fn parse(name: &str, v: &Value, min: f64, max: f64) -> Result<Self, ParamError>;
}

fn bad_type(name: &str, expected: &'static str, v: &Value) -> ParamError {
    ParamError::BadType {
        name: name.to_string(),
        expected,
        got: v.to_string(),
    }
}

fn number_in_range(name: &str, v: &Value, min: f64, max: f64) -> Result<f64, ParamError> {
    let x = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|x| x.is_finite())
    .ok_or_else(|| bad_type(name, "a number", v))?;
    if x < min || x > max {
        return Err(ParamError::OutOfRange {
            name: name.to_string(),
            value: x,
            min,
            max,
        });
    }
    Ok(x)
}

impl ParamValue for f64 {
    const TYPE: &'static str = "real";
    fn parse(name: &str, v: &Value, min: f64, max: f64) -> Result<Self, ParamError> {
        number_in_range(name, v, min, max)
    }
}

impl ParamValue for f32 {
    const TYPE: &'static str = "real";
    fn parse(name: &str, v: &Value, min: f64, max: f64) -> Result<Self, ParamError> {
        number_in_range(name, v, min, max).map(|x| x as f32)
    }
}

impl ParamValue for i64 {
    const TYPE: &'static str = "integer";
    fn parse(name: &str, v: &Value, min: f64, max: f64) -> Result<Self, ParamError> {
        let x = number_in_range(name, v, min, max)?;
        if x.fract() != 0.0 {
            return Err(bad_type(name, "an integer", v));
        }
        Ok(x as i64)
    }
}

impl ParamValue for i32 {
    const TYPE: &'static str = "integer";
    fn parse(name: &str, v: &Value, min: f64, max: f64) -> Result<Self, ParamError> {
        i64::parse(name, v, min, max).map(|x| x as i32)
    }
}

impl ParamValue for bool {
    const TYPE: &'static str = "boolean";
    fn parse(name: &str, v: &Value, _: f64, _: f64) -> Result<Self, ParamError> {
        match v {
            Value::Bool(b) => Ok(*b),
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad_type(name, "true or false", v)),
            },
            _ => Err(bad_type(name, "true or false", v)),
        }
    }
}

impl ParamValue for Enabled {
    const TYPE: &'static str = "auto, true or false";
    fn parse(name: &str, v: &Value, _: f64, _: f64) -> Result<Self, ParamError> {
        match v {
            Value::Bool(true) => Ok(Enabled::True),
            Value::Bool(false) => Ok(Enabled::False),
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "auto" => Ok(Enabled::Auto),
                "true" => Ok(Enabled::True),
                "false" => Ok(Enabled::False),
                _ => Err(bad_type(name, "auto, true or false", v)),
            },
            _ => Err(bad_type(name, "auto, true or false", v)),
        }
    }
}

/// An optional player in parameters: `""`/null = none, else `B`/`W`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OptPlayer(pub Option<Player>);

impl Serialize for OptPlayer {
    fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        match self.0 {
            None => s.serialize_str(""),
            Some(p) => s.serialize_str(&p.letter().to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for OptPlayer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        OptPlayer::parse("player", &v, 0.0, 0.0).map_err(serde::de::Error::custom)
    }
}

impl ParamValue for OptPlayer {
    const TYPE: &'static str = "player (B, W or empty)";
    fn parse(name: &str, v: &Value, _: f64, _: f64) -> Result<Self, ParamError> {
        match v {
            Value::Null => Ok(OptPlayer(None)),
            Value::String(s) if s.trim().is_empty() => Ok(OptPlayer(None)),
            Value::String(s) => Player::parse(s.trim())
                .map(|p| OptPlayer(Some(p)))
                .ok_or_else(|| bad_type(name, "a player (b, w)", v)),
            _ => Err(bad_type(name, "a player (b, w)", v)),
        }
    }
}

/// KataGo's `humanSLProfile`: which players a human-style net is told
/// it sees (`rank_5k`, `preaz_2d_9k`, `proyear_1990`, ...), as named and as
/// the metadata it stands for. Empty (the default): no profile, which a
/// human-style net refuses to run without.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HumanProfile {
    /// The name as given.
    pub name: String,
    /// What it stands for (`None` for KataGo's names of no profile).
    pub meta: Option<SgfMetadata>,
}

impl Serialize for HumanProfile {
    fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        s.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for HumanProfile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        HumanProfile::parse("humanSLProfile", &v, 0.0, 0.0).map_err(serde::de::Error::custom)
    }
}

impl ParamValue for HumanProfile {
    const TYPE: &'static str = "human SL profile";
    fn parse(name: &str, v: &Value, _: f64, _: f64) -> Result<Self, ParamError> {
        let given = match v {
            Value::Null => "",
            Value::String(s) => s.trim(),
            _ => return Err(bad_type(name, "a human SL profile name", v)),
        };
        let meta = SgfMetadata::profile(given).map_err(|e| ParamError::Invalid {
            name: name.to_string(),
            why: e.to_string(),
        })?;
        Ok(HumanProfile {
            name: given.to_string(),
            meta,
        })
    }
}

/// Declares the parameter struct and its by-name table in one place, so a
/// name, its type and its range cannot drift apart.
macro_rules! search_params {
    ($( $(#[doc = $doc:literal])* $field:ident : $ty:ty = $key:literal [$min:expr, $max:expr] ; )*) => {
        /// All search parameters, named in JSON/TOML exactly as KataGo's
        /// config keys. Build with [`SearchParams::defaults`] (KataGo's
        /// defaults for a program) or [`SearchParams::from_overrides`].
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct SearchParams {
            $( $(#[doc = $doc])* #[serde(rename = $key)] pub $field: $ty, )*
        }

        impl SearchParams {
            /// Every parameter name accepted by [`SearchParams::apply_override`].
            pub const NAMES: &'static [&'static str] = &[$($key),*];

            /// Sets one parameter by its KataGo name, checking type and range.
            pub fn apply_override(&mut self, name: &str, value: &Value) -> Result<(), ParamError> {
                match name {
                    $( $key => { self.$field = <$ty as ParamValue>::parse($key, value, $min as f64, $max as f64)?; } )*
                    _ => return Err(ParamError::Unknown(name.to_string())),
                }
                Ok(())
            }

            /// The configuration reference's rows of every parameter, with
            /// the defaults of `setup`.
            pub fn reference_rows(setup: SetupFor) -> Vec<crate::config::Row> {
                let defaults = SearchParams::defaults(setup);
                vec![$(
                    crate::config::json_row(
                        $key,
                        <$ty as ParamValue>::TYPE,
                        ($min as f64, $max as f64),
                        defaults.get($key),
                        concat!($($doc, " ",)*),
                    ),
                )*]
            }

            /// The current value of one parameter, by KataGo name.
            pub fn get(&self, name: &str) -> Option<Value> {
                match name {
                    $( $key => serde_json::to_value(&self.$field).ok(), )*
                    _ => None,
                }
            }
        }
    };
}

const BIG: f64 = 1.0e20;
const MAX_COUNT: f64 = (1u64 << 50) as f64;

search_params! {
    /// Scaling of the [-1,1] win/loss value in the utility.
    win_loss_utility_factor: f64 = "winLossUtilityFactor" [0.0, 1.0];
    /// Scaling of the score value centred at 0.
    static_score_utility_factor: f64 = "staticScoreUtilityFactor" [0.0, 1.0];
    /// Scaling of the score value centred at the root's expected score.
    dynamic_score_utility_factor: f64 = "dynamicScoreUtilityFactor" [0.0, 1.0];
    /// Moves the dynamic score centre this far towards zero (capped).
    dynamic_score_center_zero_weight: f64 = "dynamicScoreCenterZeroWeight" [0.0, 1.0];
    /// Scale of the dynamic score value, in units of sqrt(board area).
    dynamic_score_center_scale: f64 = "dynamicScoreCenterScale" [0.2, 5.0];
    /// Utility of a no-result game for white.
    no_result_utility_for_white: f64 = "noResultUtilityForWhite" [-1.0, 1.0];
    /// A draw counts as this many wins for white.
    draw_equivalent_wins_for_white: f64 = "drawEquivalentWinsForWhite" [0.0, 1.0];
    /// Constant factor of the exploration term.
    cpuct_exploration: f64 = "cpuctExploration" [0.0, 10.0];
    /// Log-growing factor of the exploration term.
    cpuct_exploration_log: f64 = "cpuctExplorationLog" [0.0, 10.0];
    /// Visits at which the log term starts to matter.
    cpuct_exploration_base: f64 = "cpuctExplorationBase" [10.0, 100000.0];
    /// Prior utility stdev for the variance-scaled cPUCT.
    cpuct_utility_stdev_prior: f64 = "cpuctUtilityStdevPrior" [1e-8, 10.0];
    /// Weight (in visits) of that prior.
    cpuct_utility_stdev_prior_weight: f64 = "cpuctUtilityStdevPriorWeight" [0.0, 100.0];
    /// How strongly cPUCT follows the observed utility stdev (0 = constant).
    cpuct_utility_stdev_scale: f64 = "cpuctUtilityStdevScale" [0.0, 1.0];
    /// First-play-urgency reduction below the root.
    fpu_reduction_max: f64 = "fpuReductionMax" [0.0, 2.0];
    /// Moves the FPU this far towards a loss below the root.
    fpu_loss_prop: f64 = "fpuLossProp" [0.0, 1.0];
    /// FPU parent value: blend the parent's average and its raw NN value by visited policy mass.
    fpu_parent_weight_by_visited_policy: bool = "fpuParentWeightByVisitedPolicy" [0, 1];
    /// Power of the visited policy mass in that blend.
    fpu_parent_weight_by_visited_policy_pow: f64 = "fpuParentWeightByVisitedPolicyPow" [0.0, 5.0];
    /// Fixed blend (0 = parent average, 1 = parent NN value) when not by visited policy.
    fpu_parent_weight: f64 = "fpuParentWeight" [0.0, 1.0];
    /// Geometric blend towards the optimistic policy head (passed to the evaluator).
    policy_optimism: f64 = "policyOptimism" [0.0, 1.0];
    /// Down-weights children with bad values when averaging (0 = off).
    value_weight_exponent: f64 = "valueWeightExponent" [0.0, 1.0];
    /// Prunes child weight far above what the policy justifies when averaging.
    use_noise_pruning: bool = "useNoisePruning" [0, 1];
    /// Utility scale of the noise pruning.
    noise_prune_utility_scale: f64 = "noisePruneUtilityScale" [0.001, 10.0];
    /// Most weight noise pruning may remove from one child.
    noise_pruning_cap: f64 = "noisePruningCap" [0.0, 1e50];
    /// Weights playouts by the net's short-term error estimate.
    use_uncertainty: bool = "useUncertainty" [0, 1];
    /// Weight given by an uncertainty of 1 utility.
    uncertainty_coeff: f64 = "uncertaintyCoeff" [0.0001, 1.0];
    /// Weight scales inversely with this power of the uncertainty.
    uncertainty_exponent: f64 = "uncertaintyExponent" [0.0, 2.0];
    /// The most weight one playout can have.
    uncertainty_max_weight: f64 = "uncertaintyMaxWeight" [1.0, 100.0];
    /// Graph search: positions reached by different move orders are one
    /// node (KataGo's `useGraphSearch`, on except for distributed
    /// self-play).
    use_graph_search: bool = "useGraphSearch" [0, 1];
    /// Graph search: a move that could be undone within this many moves
    /// keeps the path in the position's graph hash.
    graph_search_rep_bound: i32 = "graphSearchRepBound" [3, 50];
    /// Graph search: chance of searching below a transposition that has
    /// more visits than its edge instead of counting the edge up.
    graph_search_catch_up_leak_prob: f64 = "graphSearchCatchUpLeakProb" [0.0, 1.0];
    /// Dirichlet noise on the root policy.
    root_noise_enabled: bool = "rootNoiseEnabled" [0, 1];
    /// Total Dirichlet concentration (alpha summed over legal moves).
    root_dirichlet_noise_total_concentration: f64 = "rootDirichletNoiseTotalConcentration" [0.001, 10000.0];
    /// Root policy = weight * noise + (1 - weight) * policy.
    root_dirichlet_noise_weight: f64 = "rootDirichletNoiseWeight" [0.0, 1.0];
    /// Root policy softmax temperature.
    root_policy_temperature: f64 = "rootPolicyTemperature" [0.01, 100.0];
    /// Root policy temperature at the start of the game.
    root_policy_temperature_early: f64 = "rootPolicyTemperatureEarly" [0.01, 100.0];
    /// FPU reduction at the root.
    root_fpu_reduction_max: f64 = "rootFpuReductionMax" [0.0, 2.0];
    /// FPU loss proportion at the root.
    root_fpu_loss_prop: f64 = "rootFpuLossProp" [0.0, 1.0];
    /// Random symmetries (without replacement) averaged at the root.
    root_num_symmetries_to_sample: i32 = "rootNumSymmetriesToSample" [1, 8];
    /// Random symmetries (without replacement) averaged at every node (the
    /// engine's own key; KataGo evaluates each non-root node in one). The
    /// root takes the larger of this and `rootNumSymmetriesToSample`.
    num_symmetries_to_sample: i32 = "numSymmetriesToSample" [1, 8];
    /// Gumbel root search (the engine's own key; KataGo has none): the
    /// root's visits go by sequential halving over the considered moves,
    /// the move played is the best of the last ones left by prior plus
    /// completed Q (Gumbel MuZero's root; `search::gumbel`). Needs a visit
    /// budget (`maxVisits`, `maxPlayouts`); PUCT below the root.
    gumbel_root_search: bool = "gumbelRootSearch" [0, 1];
    /// Gumbel root search: the moves considered at the root.
    gumbel_considered_moves: i32 = "gumbelConsideredMoves" [1, 1000];
    /// Gumbel root search: the scale of the Gumbel noise on the root's log
    /// policy (0: the top of the policy, deterministic; 1: the paper's
    /// sampling, for self-play).
    gumbel_noise_scale: f64 = "gumbelNoiseScale" [0.0, 10.0];
    /// Gumbel root search: `c_visit` of the Q transform (mctx's 50).
    gumbel_c_visit: f64 = "gumbelCVisit" [0.0, 1e6];
    /// Gumbel root search: `c_scale` of the Q transform (mctx's 0.1).
    gumbel_c_scale: f64 = "gumbelCScale" [0.0, 1e3];
    /// Search only one of each set of symmetric moves at the root.
    root_symmetry_pruning: bool = "rootSymmetryPruning" [0, 1];
    /// Forced playouts: a root child with any visits gets sqrt(coeff * policy * total) of them.
    root_desired_per_child_visits_coeff: f64 = "rootDesiredPerChildVisitsCoeff" [0.0, 100.0];
    /// Optimistic policy blend at the root.
    root_policy_optimism: f64 = "rootPolicyOptimism" [0.0, 1.0];
    /// Move choice ~ visits^(1/temperature).
    chosen_move_temperature: f64 = "chosenMoveTemperature" [0.0, 5.0];
    /// Move choice temperature at the start of the game.
    chosen_move_temperature_early: f64 = "chosenMoveTemperatureEarly" [0.0, 5.0];
    /// Half-life in turns (19x19-scaled) from early to late temperature.
    chosen_move_temperature_halflife: f64 = "chosenMoveTemperatureHalflife" [0.1, 100000.0];
    /// Temperature only dampens moves less likely than this.
    chosen_move_temperature_only_below_prob: f64 = "chosenMoveTemperatureOnlyBelowProb" [0.0, 1.0];
    /// Visits subtracted from every move before the temperature.
    chosen_move_subtract: f64 = "chosenMoveSubtract" [0.0, 1.0e10];
    /// Moves with fewer visits than this are never chosen.
    chosen_move_prune: f64 = "chosenMovePrune" [0.0, 1.0e10];
    /// Choose by lower confidence bound rather than visits alone.
    use_lcb_for_selection: bool = "useLcbForSelection" [0, 1];
    /// Width of the confidence bound, in stdevs.
    lcb_stdevs: f64 = "lcbStdevs" [1.0, 12.0];
    /// LCB only picks moves with at least this share of the top move's weight.
    min_visit_prop_for_lcb: f64 = "minVisitPropForLCB" [0.0, 1.0];
    /// The pre-1.8 LCB bug fix.
    use_non_buggy_lcb: bool = "useNonBuggyLcb" [0, 1];
    /// Bonus points to encourage tidy passing at the end of the game.
    root_ending_bonus_points: f64 = "rootEndingBonusPoints" [-1.0, 1.0];
    /// Prune useless game-prolonging moves at the root.
    root_prune_useless_moves: bool = "rootPruneUselessMoves" [0, 1];
    /// Never assume our own pass ends the game.
    conservative_pass: bool = "conservativePass" [0, 1];
    /// Territory scoring: fill dame before passing.
    fill_dame_before_pass: bool = "fillDameBeforePass" [0, 1];
    /// Pass-alive areas computed as if multi-stone suicide were legal (auto = as the net expects).
    always_compute_pass_alive_under_suicide_rules: Enabled = "alwaysComputePassAliveUnderSuicideRules" [0, 1];
    /// Random utility bonus on root children, to explore wider (analysis).
    wide_root_noise: f64 = "wideRootNoise" [0.0, 5.0];
    /// Hacks that stop passing from confusing deeper searches.
    enable_passing_hacks: bool = "enablePassingHacks" [0, 1];
    /// Always search both pass and non-pass when a pass would end the phase.
    enable_more_passing_hacks: bool = "enableMorePassingHacks" [0, 1];
    /// Play as if with this many doublings of playouts over the opponent.
    playout_doubling_advantage: f64 = "playoutDoublingAdvantage" [-3.0, 3.0];
    /// The player the advantage is for (empty = the root player).
    playout_doubling_advantage_pla: OptPlayer = "playoutDoublingAdvantagePla" [0, 1];
    /// Utility the searching player loses for each shape of its own earlier
    /// moves in the game it plays again (KataGo's pattern bonus table,
    /// [`super::PatternBonusTable`]); 0: off.
    avoid_repeated_pattern_utility: f64 = "avoidRepeatedPatternUtility" [-3.0, 3.0];
    /// Policy temperature applied by the evaluator everywhere in the tree.
    nn_policy_temperature: f32 = "nnPolicyTemperature" [0.01, 5.0];
    /// The players a human-style net is told it sees (KataGo's
    /// `humanSLProfile`, see [`HumanProfile`]).
    human_sl_profile: HumanProfile = "humanSLProfile" [0, 0];
    /// Exploration constant when a playout explores by the human net's
    /// policy (KataGo's `humanSLCpuctExploration`).
    human_sl_cpuct_exploration: f64 = "humanSLCpuctExploration" [0.0, 1000.0];
    /// Its part growing with the square root of the children's weight.
    human_sl_cpuct_permanent: f64 = "humanSLCpuctPermanent" [0.0, 1000.0];
    /// Chance that a root playout chooses its move by the human policy
    /// (PUCT with `humanSLCpuct*`) as a weightless playout: the move's
    /// subtree grows, the root's values and visits do not.
    human_sl_root_explore_prob_weightless: f64 = "humanSLRootExploreProbWeightless" [0.0, 1.0];
    /// Chance that a root playout chooses its move by the human policy and
    /// counts as usual.
    human_sl_root_explore_prob_weightful: f64 = "humanSLRootExploreProbWeightful" [0.0, 1.0];
    /// The weightless chance below the root, at the root player's nodes
    /// (the human net is then evaluated at every node).
    human_sl_pla_explore_prob_weightless: f64 = "humanSLPlaExploreProbWeightless" [0.0, 1.0];
    /// The counted chance at the root player's nodes below the root.
    human_sl_pla_explore_prob_weightful: f64 = "humanSLPlaExploreProbWeightful" [0.0, 1.0];
    /// The weightless chance at the opponent's nodes.
    human_sl_opp_explore_prob_weightless: f64 = "humanSLOppExploreProbWeightless" [0.0, 1.0];
    /// The counted chance at the opponent's nodes.
    human_sl_opp_explore_prob_weightful: f64 = "humanSLOppExploreProbWeightful" [0.0, 1.0];
    /// How far the move choice moves from the search's play selection
    /// values to the human policy (0: not at all, 1: the human policy,
    /// shifted by `humanSLChosenMovePiklLambda`).
    human_sl_chosen_move_prop: f64 = "humanSLChosenMoveProp" [0.0, 1.0];
    /// The human policy decides where to play, the search whether to pass.
    human_sl_chosen_move_ignore_pass: bool = "humanSLChosenMoveIgnorePass" [0, 1];
    /// Utility scale of the shift of the human policy towards the search's
    /// better moves (`exp((u - u_max) / lambda)`; huge: no shift).
    human_sl_chosen_move_pikl_lambda: f64 = "humanSLChosenMovePiklLambda" [0.0, 1000000000.0];
    /// KataGo's defence against an opponent who mirrors every move
    /// through the centre (see the `mirror` module). Off by default; the
    /// GTP front end turns it on for `genmove` (`genmoveAntiMirror`).
    anti_mirror: bool = "antiMirror" [0, 1];
    /// Hide history before the root from the net.
    ignore_pre_root_history: bool = "ignorePreRootHistory" [0, 1];
    /// Hide all history from the net.
    ignore_all_history: bool = "ignoreAllHistory" [0, 1];
    /// Subtree value bias correction lambda (0 = off).
    subtree_value_bias_factor: f64 = "subtreeValueBiasFactor" [0.0, 1.0];
    /// Shards of the subtree value bias table.
    subtree_value_bias_table_num_shards: i32 = "subtreeValueBiasTableNumShards" [1, 1 << 24];
    /// On tree reuse, the share of a dropped node's bias weight that is removed.
    subtree_value_bias_free_prop: f64 = "subtreeValueBiasFreeProp" [0.0, 1.0];
    /// Bias entries weight nodes by child visits to this power (alpha).
    subtree_value_bias_weight_exponent: f64 = "subtreeValueBiasWeightExponent" [0.0, 1.0];
    /// Graph search: remember the values of well-searched positions across
    /// searches ([`super::EvalCache`]).
    use_eval_cache: bool = "useEvalCache" [0, 1];
    /// The visits a node needs for the eval cache to remember it.
    eval_cache_min_visits: i64 = "evalCacheMinVisits" [1, MAX_COUNT];
    /// Graph search: the node table has 2^this shards, each with a lock
    /// (more than 16 are taken as 16).
    node_table_shards_power_of_two: i32 = "nodeTableShardsPowerOfTwo" [8, 24];
    /// Virtual losses one thread adds to a node it descends through.
    num_virtual_losses_per_thread: f64 = "numVirtualLossesPerThread" [0.01, 1000.0];
    /// Search threads.
    num_threads: i32 = "numSearchThreads" [1, 4096];
    /// Fewer threads are used when there are fewer playouts than this per thread.
    min_playouts_per_thread: f64 = "minPlayoutsPerThread" [0.0, BIG];
    /// Most root visits, counting those kept from tree reuse.
    max_visits: i64 = "maxVisits" [1, MAX_COUNT];
    /// Most new playouts in this search.
    max_playouts: i64 = "maxPlayouts" [1, MAX_COUNT];
    /// Most seconds of search.
    max_time: f64 = "maxTime" [0.0, BIG];
    /// maxVisits while pondering.
    max_visits_pondering: i64 = "maxVisitsPondering" [1, MAX_COUNT];
    /// maxPlayouts while pondering.
    max_playouts_pondering: i64 = "maxPlayoutsPondering" [1, MAX_COUNT];
    /// maxTime while pondering.
    max_time_pondering: f64 = "maxTimePondering" [0.0, BIG];
    /// Seconds held back for lag under time controls.
    lag_buffer: f64 = "lagBuffer" [0.0, 3600.0];
    /// Search size factor after one opponent pass.
    search_factor_after_one_pass: f64 = "searchFactorAfterOnePass" [0.0, 1.0];
    /// Search size factor after two opponent passes.
    search_factor_after_two_pass: f64 = "searchFactorAfterTwoPass" [0.0, 1.0];
    /// Time control: credit for the share of the tree reused.
    tree_reuse_carry_over_time_factor: f64 = "treeReuseCarryOverTimeFactor" [0.0, 1.0];
    /// Time control: think this factor longer than the base allocation.
    overallocate_time_factor: f64 = "overallocateTimeFactor" [0.01, 100.0];
    /// Time control: extra factor in the midgame.
    midgame_time_factor: f64 = "midgameTimeFactor" [0.01, 100.0];
    /// Time control: turn of peak midgame weight (19x19).
    midgame_turn_peak_time: f64 = "midgameTurnPeakTime" [0.0, 1000.0];
    /// Time control: decay of midgame weight in the endgame (19x19).
    endgame_turn_time_decay: f64 = "endgameTurnTimeDecay" [0.0, 1000.0];
    /// Time control: factor for obvious moves.
    obvious_moves_time_factor: f64 = "obviousMovesTimeFactor" [0.01, 1.0];
    /// Time control: policy entropy of an obvious move.
    obvious_moves_policy_entropy_tolerance: f64 = "obviousMovesPolicyEntropyTolerance" [0.001, 2.0];
    /// Time control: search surprise of an obvious move.
    obvious_moves_policy_surprise_tolerance: f64 = "obviousMovesPolicySurpriseTolerance" [0.001, 2.0];
    /// Root moves that cannot catch this share of the top move's visits are pruned (0 = off).
    futile_visits_threshold: f64 = "futileVisitsThreshold" [0.0, 1.0];
}

impl SearchParams {
    /// The root searched as any other node (KataGo's noiseless root
    /// settings, shared by cheap self-play searches and scoring searches):
    /// no noise, policy temperature 1, the normal FPU, no forced playouts,
    /// one symmetry.
    pub fn search_root_as_any_node(&mut self) {
        self.root_noise_enabled = false;
        self.root_policy_temperature = 1.0;
        self.root_policy_temperature_early = 1.0;
        self.root_fpu_loss_prop = self.fpu_loss_prop;
        self.root_fpu_reduction_max = self.fpu_reduction_max;
        self.root_desired_per_child_visits_coeff = 0.0;
        self.root_num_symmetries_to_sample = 1;
    }

    /// KataGo's defaults for a program, as `Setup::loadParams` gives them
    /// when the config names nothing.
    pub fn defaults(setup: SetupFor) -> SearchParams {
        use SetupFor::*;
        let interactive = matches!(setup, Gtp | Analysis);
        let strong = !matches!(setup, Distributed | Other);
        let not_distributed = setup != Distributed;
        // The clock settings are the same config keys the time budget reads:
        // take its defaults (KataGo's) so the two cannot drift apart.
        let time = TimeParams::default();
        let mut p = SearchParams {
            win_loss_utility_factor: 1.0,
            static_score_utility_factor: 0.1,
            dynamic_score_utility_factor: 0.3,
            dynamic_score_center_zero_weight: 0.2,
            dynamic_score_center_scale: 0.75,
            no_result_utility_for_white: 0.0,
            draw_equivalent_wins_for_white: 0.5,
            cpuct_exploration: 1.0,
            cpuct_exploration_log: 0.45,
            cpuct_exploration_base: 500.0,
            cpuct_utility_stdev_prior: 0.40,
            cpuct_utility_stdev_prior_weight: 2.0,
            cpuct_utility_stdev_scale: if strong { 0.85 } else { 0.0 },
            fpu_reduction_max: 0.2,
            fpu_loss_prop: 0.0,
            fpu_parent_weight_by_visited_policy: not_distributed,
            fpu_parent_weight_by_visited_policy_pow: 2.0,
            fpu_parent_weight: 0.0,
            policy_optimism: if strong { 1.0 } else { 0.0 },
            value_weight_exponent: 0.25,
            use_noise_pruning: strong,
            noise_prune_utility_scale: 0.15,
            noise_pruning_cap: 1e50,
            use_uncertainty: strong,
            uncertainty_coeff: 0.25,
            uncertainty_exponent: 1.0,
            uncertainty_max_weight: 8.0,
            use_graph_search: not_distributed,
            graph_search_rep_bound: 11,
            graph_search_catch_up_leak_prob: 0.0,
            root_noise_enabled: false,
            root_dirichlet_noise_total_concentration: 10.83,
            root_dirichlet_noise_weight: 0.25,
            root_policy_temperature: 1.0,
            root_policy_temperature_early: 1.0,
            root_fpu_reduction_max: 0.1,
            root_fpu_loss_prop: 0.0,
            root_num_symmetries_to_sample: 1,
            num_symmetries_to_sample: 1,
            gumbel_root_search: false,
            gumbel_considered_moves: 16,
            gumbel_noise_scale: 0.0,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            root_symmetry_pruning: interactive,
            root_desired_per_child_visits_coeff: 0.0,
            root_policy_optimism: 0.0,
            chosen_move_temperature: 0.1,
            chosen_move_temperature_early: 0.5,
            chosen_move_temperature_halflife: 19.0,
            chosen_move_temperature_only_below_prob: 1.0,
            chosen_move_subtract: 0.0,
            chosen_move_prune: 1.0,
            use_lcb_for_selection: true,
            lcb_stdevs: 5.0,
            min_visit_prop_for_lcb: 0.15,
            use_non_buggy_lcb: strong,
            root_ending_bonus_points: 0.5,
            root_prune_useless_moves: true,
            conservative_pass: false,
            fill_dame_before_pass: false,
            always_compute_pass_alive_under_suicide_rules: Enabled::Auto,
            wide_root_noise: if setup == Analysis { 0.04 } else { 0.0 },
            enable_passing_hacks: interactive,
            enable_more_passing_hacks: interactive,
            playout_doubling_advantage: 0.0,
            playout_doubling_advantage_pla: OptPlayer(None),
            avoid_repeated_pattern_utility: 0.0,
            nn_policy_temperature: 1.0,
            human_sl_profile: HumanProfile::default(),
            human_sl_cpuct_exploration: 1.0,
            human_sl_cpuct_permanent: 0.0,
            human_sl_root_explore_prob_weightless: 0.0,
            human_sl_root_explore_prob_weightful: 0.0,
            human_sl_pla_explore_prob_weightless: 0.0,
            human_sl_pla_explore_prob_weightful: 0.0,
            human_sl_opp_explore_prob_weightless: 0.0,
            human_sl_opp_explore_prob_weightful: 0.0,
            human_sl_chosen_move_prop: 0.0,
            human_sl_chosen_move_ignore_pass: false,
            human_sl_chosen_move_pikl_lambda: 1e9,
            anti_mirror: false,
            ignore_pre_root_history: setup == Analysis,
            ignore_all_history: false,
            subtree_value_bias_factor: 0.45,
            subtree_value_bias_table_num_shards: 65536,
            subtree_value_bias_free_prop: 0.8,
            subtree_value_bias_weight_exponent: 0.85,
            use_eval_cache: false,
            eval_cache_min_visits: 100,
            node_table_shards_power_of_two: 16,
            num_virtual_losses_per_thread: 1.0,
            num_threads: 1,
            min_playouts_per_thread: if interactive { 8.0 } else { 0.0 },
            max_visits: 1 << 50,
            max_playouts: 1 << 50,
            max_time: 1.0e20,
            max_visits_pondering: 1 << 50,
            max_playouts_pondering: 1 << 50,
            max_time_pondering: 1.0e20,
            lag_buffer: time.lag_buffer,
            search_factor_after_one_pass: time.search_factor_after_one_pass,
            search_factor_after_two_pass: time.search_factor_after_two_pass,
            tree_reuse_carry_over_time_factor: 0.0,
            overallocate_time_factor: time.overallocate_time_factor,
            midgame_time_factor: time.midgame_time_factor,
            midgame_turn_peak_time: time.midgame_turn_peak_time,
            endgame_turn_time_decay: time.endgame_turn_time_decay,
            obvious_moves_time_factor: time.obvious_moves_time_factor,
            obvious_moves_policy_entropy_tolerance: time.obvious_moves_policy_entropy_tolerance,
            obvious_moves_policy_surprise_tolerance: time.obvious_moves_policy_surprise_tolerance,
            futile_visits_threshold: 0.0,
        };
        if strong {
            p.root_policy_optimism = p.policy_optimism.min(0.2);
        }
        p
    }

    /// KataGo's defaults for `setup` with the given overrides applied, then
    /// the parameters whose KataGo default depends on another one filled in
    /// when not given: `rootFpuReductionMax` (0 with root noise, else 0.1),
    /// `rootFpuLossProp` (= `fpuLossProp`), `rootPolicyTemperatureEarly`
    /// (= `rootPolicyTemperature`), `rootPolicyOptimism`
    /// (= min(`policyOptimism`, 0.2) outside self-play).
    pub fn from_overrides<'a>(
        setup: SetupFor,
        overrides: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> Result<SearchParams, ParamError> {
        let mut p = SearchParams::defaults(setup);
        let mut given = std::collections::HashSet::new();
        for (name, value) in overrides {
            p.apply_override(name, value)?;
            given.insert(name);
        }
        if !given.contains("rootFpuReductionMax") {
            p.root_fpu_reduction_max = if p.root_noise_enabled { 0.0 } else { 0.1 };
        }
        if !given.contains("rootFpuLossProp") {
            p.root_fpu_loss_prop = p.fpu_loss_prop;
        }
        if !given.contains("rootPolicyTemperatureEarly") {
            p.root_policy_temperature_early = p.root_policy_temperature;
        }
        if !given.contains("rootPolicyOptimism") {
            p.root_policy_optimism = if matches!(setup, SetupFor::Distributed | SetupFor::Other) {
                0.0
            } else {
                p.policy_optimism.min(0.2)
            };
        }
        Ok(p)
    }

    /// The radius of the utility range: the most a utility can differ from 0.
    pub fn utility_radius(&self) -> f64 {
        self.win_loss_utility_factor
            + self.static_score_utility_factor
            + self.dynamic_score_utility_factor
    }
}

impl SearchParams {
    /// KataGo's `failIfParamsDifferOnUnchangeableParameter`: the node
    /// table's shards and the eval cache (which analysis threads share)
    /// are set at start-up; a change by `kata-set-param` or an analysis
    /// query's `overrideSettings` is an error.
    pub fn check_unchangeable(&self, initial: &SearchParams) -> Result<(), String> {
        let fixed = [
            (
                "nodeTableShardsPowerOfTwo",
                self.node_table_shards_power_of_two == initial.node_table_shards_power_of_two,
            ),
            (
                "useEvalCache",
                self.use_eval_cache == initial.use_eval_cache,
            ),
            (
                "evalCacheMinVisits",
                self.eval_cache_min_visits == initial.eval_cache_min_visits,
            ),
        ];
        match fixed.iter().find(|(_, same)| !same) {
            Some((name, _)) => Err(format!("Cannot change {name} after initialization")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unchangeable_params_are_katagos_three() {
        let a = SearchParams::defaults(SetupFor::Analysis);
        let mut b = a.clone();
        b.max_visits = 3;
        assert_eq!(b.check_unchangeable(&a), Ok(()));
        b.use_eval_cache = !a.use_eval_cache;
        assert_eq!(
            b.check_unchangeable(&a),
            Err("Cannot change useEvalCache after initialization".into())
        );
        let mut c = a.clone();
        c.eval_cache_min_visits += 1;
        assert!(c.check_unchangeable(&a).is_err());
        let mut d = a.clone();
        d.node_table_shards_power_of_two += 1;
        assert!(d.check_unchangeable(&a).is_err());
    }

    #[test]
    fn gtp_defaults_match_katago_setup() {
        let p = SearchParams::defaults(SetupFor::Gtp);
        assert_eq!(p.cpuct_exploration_log, 0.45);
        assert_eq!(p.cpuct_utility_stdev_scale, 0.85);
        assert!(p.use_uncertainty && p.use_noise_pruning && p.root_symmetry_pruning);
        assert_eq!(p.wide_root_noise, 0.0);
        assert_eq!(p.root_policy_optimism, 0.2);
        let a = SearchParams::defaults(SetupFor::Analysis);
        assert_eq!(a.wide_root_noise, 0.04);
        assert!(a.ignore_pre_root_history);
        let s = SearchParams::defaults(SetupFor::Other);
        assert!(!s.use_uncertainty);
        assert_eq!(s.cpuct_utility_stdev_scale, 0.0);
        assert_eq!(s.policy_optimism, 0.0);
    }

    #[test]
    fn overrides_are_checked_by_name_type_and_range() {
        let mut p = SearchParams::defaults(SetupFor::Gtp);
        p.apply_override("cpuctExploration", &json!(1.5)).unwrap();
        assert_eq!(p.cpuct_exploration, 1.5);
        p.apply_override("maxVisits", &json!("200")).unwrap();
        assert_eq!(p.max_visits, 200);
        p.apply_override("conservativePass", &json!("true"))
            .unwrap();
        assert!(p.conservative_pass);
        p.apply_override("playoutDoublingAdvantagePla", &json!("w"))
            .unwrap();
        assert_eq!(
            p.playout_doubling_advantage_pla,
            OptPlayer(Some(Player::White))
        );
        assert!(matches!(
            p.apply_override("cpuctExplorationX", &json!(1)),
            Err(ParamError::Unknown(_))
        ));
        assert!(matches!(
            p.apply_override("cpuctExploration", &json!(11.0)),
            Err(ParamError::OutOfRange { .. })
        ));
        assert!(matches!(
            p.apply_override("useLcbForSelection", &json!(3)),
            Err(ParamError::BadType { .. })
        ));
        assert!(matches!(
            p.apply_override("maxVisits", &json!(1.5)),
            Err(ParamError::BadType { .. })
        ));
        assert_eq!(p.get("cpuctExploration"), Some(json!(1.5)));
    }

    #[test]
    fn dependent_defaults_follow_their_source() {
        let on = json!(true);
        let p = SearchParams::from_overrides(SetupFor::Other, [("rootNoiseEnabled", &on)]).unwrap();
        assert_eq!(p.root_fpu_reduction_max, 0.0);
        let t = json!(1.3);
        let p =
            SearchParams::from_overrides(SetupFor::Gtp, [("rootPolicyTemperature", &t)]).unwrap();
        assert_eq!(p.root_policy_temperature_early, 1.3);
        assert_eq!(p.root_fpu_reduction_max, 0.1);
    }

    #[test]
    fn serde_uses_katago_names_and_round_trips() {
        let p = SearchParams::defaults(SetupFor::Analysis);
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["numSearchThreads"], json!(1));
        assert_eq!(v["wideRootNoise"], json!(0.04));
        for name in SearchParams::NAMES {
            assert!(v.get(name).is_some(), "{name} missing from serialisation");
        }
        let back: SearchParams = serde_json::from_value(v).unwrap();
        assert_eq!(back, p);
    }
}
