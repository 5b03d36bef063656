//! The fields of one analysis query, read and checked in KataGo's order.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{
    int_array, AnalyzeQuery, MoveRestriction, PlacedMove, QueryError, RestrictionEntry,
    MAX_PRIORITY,
};
use crate::game::{
    komi_is_int_or_half_int, Move, Player, Rules, WhiteHandicapBonusRule, MAX_LEN, MAX_USER_KOMI,
    MIN_LEN,
};
use crate::tsumego::{self, GoalSpec, KoThreats, RegionSpec, TsumegoRequest};

/// Reads the fields of one analysis query.
pub(super) struct FieldParser<'a> {
    pub(super) id: &'a str,
    pub(super) input: &'a Map<String, Value>,
}

/// The search settings of a query, as [`FieldParser::search_options`]
/// reads them (the same fields of [`AnalyzeQuery`]).
struct SearchOptions {
    max_visits: Option<i64>,
    analysis_pv_len: Option<usize>,
    root_fpu_reduction_max: Option<f64>,
    root_policy_temperature: Option<f64>,
    include_ownership: bool,
    include_ownership_stdev: bool,
    include_moves_ownership: bool,
    include_moves_ownership_stdev: bool,
    include_policy: bool,
    include_pv_visits: bool,
    include_no_result_value: bool,
    report_during_search_every: Option<f64>,
    first_report_during_search_after: Option<f64>,
}

impl FieldParser<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> QueryError {
        QueryError::field(self.id, field, message)
    }

    fn get(&self, field: &str) -> Option<&Value> {
        self.input.get(field)
    }

    fn integer(
        &self,
        field: &str,
        min: i64,
        max: i64,
        message: &str,
    ) -> Result<Option<i64>, QueryError> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => integer_in(v, min, max)
                .map(Some)
                .ok_or_else(|| self.err(field, message)),
        }
    }

    fn number(
        &self,
        field: &str,
        min: f64,
        max: f64,
        message: &str,
    ) -> Result<Option<f64>, QueryError> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= min && x <= max => Ok(Some(x)),
                _ => Err(self.err(field, message)),
            },
        }
    }

    fn boolean(&self, field: &str) -> Result<bool, QueryError> {
        match self.get(field) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.err(field, "Must be a boolean")),
        }
    }

    pub(super) fn parse_analyze(&self) -> Result<AnalyzeQuery, QueryError> {
        let size_error = format!("Must provide an integer from {MIN_LEN} to {MAX_LEN}");
        for field in ["boardXSize", "boardYSize"] {
            if self.get(field).is_none() {
                return Err(self.err(field, size_error.clone()));
            }
        }
        let x_size = self.size("boardXSize", &size_error)?;
        let y_size = self.size("boardYSize", &size_error)?;

        let initial_stones = match self.get("initialStones") {
            Some(v) => self.placed_moves("initialStones", v, x_size, y_size, false)?,
            None => Vec::new(),
        };
        let moves = match self.get("moves") {
            Some(v) => self.placed_moves("moves", v, x_size, y_size, true)?,
            None => {
                return Err(self.err("moves", "Must specify an array of [player,location] pairs"))
            }
        };
        let initial_player = match self.get("initialPlayer") {
            Some(v) => Some(self.player("initialPlayer", v)?),
            None => None,
        };

        let analyze_turns_raw = self.analyze_turns(moves.len())?;
        let priorities = self.priorities(analyze_turns_raw.as_deref())?;
        let rules = self.query_rules()?;
        let override_settings = match self.get("overrideSettings") {
            None => Vec::new(),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(_) => return Err(self.err("overrideSettings", "Must be an object")),
        };
        let o = self.search_options()?;
        let priority = self.priority()?;
        let restriction = self.restriction(x_size, y_size)?;
        let tsumego = self.tsumego(x_size, y_size)?;
        if tsumego.is_some() && restriction.is_some() {
            return Err(self.err(
                "tsumego",
                "Cannot specify tsumego with allowMoves or avoidMoves: tsumego restricts the moves itself",
            ));
        }

        // Distinct turns in ascending order, each with its priority (a turn
        // listed twice takes the priority of its last listing, as KataGo's map).
        let mut turns: BTreeMap<usize, i64> = BTreeMap::new();
        match &analyze_turns_raw {
            Some(raw) => {
                for (i, &t) in raw.iter().enumerate() {
                    let p = priorities.as_ref().map_or(priority, |ps| ps[i]);
                    turns.insert(t as usize, p);
                }
            }
            None => {
                turns.insert(moves.len(), priority);
            }
        }

        Ok(AnalyzeQuery {
            id: self.id.to_string(),
            board_x_size: x_size,
            board_y_size: y_size,
            initial_stones,
            moves,
            initial_player,
            analyze_turns: turns.keys().copied().collect(),
            turn_priorities: turns.values().copied().collect(),
            rules,
            override_settings,
            max_visits: o.max_visits,
            analysis_pv_len: o.analysis_pv_len,
            root_fpu_reduction_max: o.root_fpu_reduction_max,
            root_policy_temperature: o.root_policy_temperature,
            include_ownership: o.include_ownership,
            include_ownership_stdev: o.include_ownership_stdev,
            include_moves_ownership: o.include_moves_ownership,
            include_moves_ownership_stdev: o.include_moves_ownership_stdev,
            include_policy: o.include_policy,
            include_pv_visits: o.include_pv_visits,
            include_no_result_value: o.include_no_result_value,
            report_during_search_every: o.report_during_search_every,
            first_report_during_search_after: o.first_report_during_search_after,
            restriction,
            tsumego,
        })
    }

    /// `analyzeTurns` as given (`None`: absent), each checked against the
    /// number of moves.
    fn analyze_turns(&self, num_moves: usize) -> Result<Option<Vec<i64>>, QueryError> {
        let analyze_turns_raw = match self.get("analyzeTurns") {
            Some(v) => Some(int_array(v).ok_or_else(|| {
                self.err(
                    "analyzeTurns",
                    "Must specify an array of integers indicating turns to analyze",
                )
            })?),
            None => None,
        };
        if let Some(turns) = &analyze_turns_raw {
            if let Some(bad) = turns.iter().find(|&&t| t < 0 || t > num_moves as i64) {
                return Err(self.err("analyzeTurns", format!("Invalid turn number: {bad}")));
            }
        }
        Ok(analyze_turns_raw)
    }

    /// `rules`, with `komi` and `whiteHandicapBonus` applied.
    fn query_rules(&self) -> Result<Rules, QueryError> {
        let mut rules = match self.get("rules") {
            Some(v @ (Value::String(_) | Value::Object(_))) => {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Rules::parse(&text)
                    .map_err(|_| self.err("rules", format!("Could not parse rules: {text}")))?
            }
            _ => {
                return Err(self.err(
                    "rules",
                    "Must specify rules string, such as \"chinese\" or \"tromp-taylor\", or a \
                     JSON object with detailed rules parameters.",
                ))
            }
        };

        let komi_msg = "Must be a integer or half-integer from -400.0 to 400.0";
        let max_komi = MAX_USER_KOMI as f64;
        if let Some(k) = self.number("komi", -max_komi, max_komi, komi_msg)? {
            let k = k as f32;
            if !komi_is_int_or_half_int(k) {
                return Err(self.err("komi", komi_msg));
            }
            rules.komi = k;
        }

        match self.get("whiteHandicapBonus") {
            None => {}
            Some(Value::String(s)) => {
                rules.white_handicap_bonus_rule =
                    WhiteHandicapBonusRule::parse(s).ok_or_else(|| {
                        self.err(
                            "whiteHandicapBonus",
                            format!("Invalid whiteHandicapBonus rule: {s}"),
                        )
                    })?
            }
            Some(_) => return Err(self.err("whiteHandicapBonus", "Must be a string")),
        }
        Ok(rules)
    }

    /// The search limits, the `include*` flags and the report intervals,
    /// checked in KataGo's order.
    fn search_options(&self) -> Result<SearchOptions, QueryError> {
        let max_visits =
            self.integer("maxVisits", 1, 1 << 50, "Must be an integer from 1 to 2^50")?;
        let analysis_pv_len = self
            .integer(
                "analysisPVLen",
                1,
                1000,
                "Must be an integer from 1 to 1000",
            )?
            .map(|n| n as usize);
        let root_fpu_reduction_max = self.number(
            "rootFpuReductionMax",
            0.0,
            2.0,
            "Must be a number from 0.0 to 2.0",
        )?;
        let root_policy_temperature = self.number(
            "rootPolicyTemperature",
            0.01,
            100.0,
            "Must be a number from 0.01 to 100.0",
        )?;
        let include_moves_ownership = self.boolean("includeMovesOwnership")?;
        let include_moves_ownership_stdev = self.boolean("includeMovesOwnershipStdev")?;
        let include_ownership = self.boolean("includeOwnership")?;
        let include_ownership_stdev = self.boolean("includeOwnershipStdev")?;
        let include_policy = self.boolean("includePolicy")?;
        let include_pv_visits = self.boolean("includePVVisits")?;
        let include_no_result_value = self.boolean("includeNoResultValue")?;
        let seconds_msg = "Must be number of seconds from 0.001 to 1000000.0";
        let report_during_search_every =
            self.number("reportDuringSearchEvery", 0.001, 1_000_000.0, seconds_msg)?;
        let first_report_during_search_after = self.number(
            "firstReportDuringSearchAfter",
            0.001,
            1_000_000.0,
            seconds_msg,
        )?;
        Ok(SearchOptions {
            max_visits,
            analysis_pv_len,
            root_fpu_reduction_max,
            root_policy_temperature,
            include_ownership,
            include_ownership_stdev,
            include_moves_ownership,
            include_moves_ownership_stdev,
            include_policy,
            include_pv_visits,
            include_no_result_value,
            report_during_search_every,
            first_report_during_search_after,
        })
    }

    /// `priority` (0 when absent), which excludes `priorities`.
    fn priority(&self) -> Result<i64, QueryError> {
        let mut priority = 0;
        if self.get("priority").is_some() {
            if self.get("priorities").is_some() {
                return Err(self.err("priority", "Cannot specify both priority and priorities"));
            }
            priority = self
                .integer(
                    "priority",
                    -MAX_PRIORITY,
                    MAX_PRIORITY,
                    "Must be a number between -2^62 and 2^62",
                )?
                .unwrap_or(0);
        }
        Ok(priority)
    }

    fn size(&self, field: &str, message: &str) -> Result<usize, QueryError> {
        Ok(self
            .integer(field, MIN_LEN as i64, MAX_LEN as i64, message)?
            .unwrap_or(0) as usize)
    }

    fn player(&self, field: &str, v: &Value) -> Result<Player, QueryError> {
        v.as_str()
            .and_then(Player::parse)
            .ok_or_else(|| self.err(field, "Must be \"b\" or \"w\""))
    }

    fn placed_moves(
        &self,
        field: &str,
        v: &Value,
        x_size: usize,
        y_size: usize,
        allow_pass: bool,
    ) -> Result<Vec<PlacedMove>, QueryError> {
        let shape = "Must be an array of pairs of the form: [\"b\" or \"w\", GTP board vertex]";
        let list = v.as_array().ok_or_else(|| self.err(field, shape))?;
        let mut out = Vec::with_capacity(list.len());
        for elt in list {
            let pair = match elt.as_array() {
                Some(p) if p.len() == 2 => p,
                _ => return Err(self.err(field, shape)),
            };
            let (Some(pla), Some(vertex)) = (pair[0].as_str(), pair[1].as_str()) else {
                return Err(self.err(field, shape));
            };
            let player = Player::parse(pla)
                .ok_or_else(|| self.err(field, format!("Could not parse player: {pla}")))?;
            let mv = parse_vertex(vertex, x_size, y_size, allow_pass).ok_or_else(|| {
                self.err(field, format!("Could not parse board location: {vertex}"))
            })?;
            out.push(PlacedMove { player, mv });
        }
        Ok(out)
    }

    fn priorities(&self, analyze_turns: Option<&[i64]>) -> Result<Option<Vec<i64>>, QueryError> {
        let Some(v) = self.get("priorities") else {
            return Ok(None);
        };
        let list = int_array(v).ok_or_else(|| {
            self.err(
                "priorities",
                "Must specify an array of integers indicating priorities",
            )
        })?;
        let Some(turns) = analyze_turns else {
            return Err(self.err(
                "priorities",
                "Can only specify when also specifying analyzeTurns",
            ));
        };
        if list.len() != turns.len() {
            return Err(self.err("priorities", "Must be of matching length to analyzeTurns"));
        }
        if let Some(bad) = list.iter().find(|p| p.abs() > MAX_PRIORITY) {
            return Err(self.err("priorities", format!("Invalid priority: {bad}")));
        }
        Ok(Some(list))
    }

    fn restriction(
        &self,
        x_size: usize,
        y_size: usize,
    ) -> Result<Option<MoveRestriction>, QueryError> {
        let allow = self.get("allowMoves");
        let avoid = self.get("avoidMoves");
        let (field, list, is_allow) = match (allow, avoid) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "allowMoves",
                    "Cannot specify both allowMoves and avoidMoves",
                ))
            }
            (Some(v), None) => ("allowMoves", v, true),
            (None, Some(v)) => ("avoidMoves", v, false),
        };
        let shape = "Must be a list of dicts with subfields 'player', 'moves', 'untilDepth'";
        let list = list.as_array().ok_or_else(|| self.err(field, shape))?;
        if is_allow && list.len() > 2 {
            return Err(self.err(
                field,
                "Currently allowMoves only allows at most one entry per player",
            ));
        }
        let mut entries: Vec<RestrictionEntry> = Vec::with_capacity(list.len());
        for dict in list {
            let (Some(pla), Some(mvs), Some(depth)) = (
                dict.get("player"),
                dict.get("moves"),
                dict.get("untilDepth"),
            ) else {
                return Err(self.err(field, shape));
            };
            // KataGo names the sub-field ("player", "moves", "untilDepth") in
            // these errors; naming the top-level field is less ambiguous
            // ("moves" is also a top-level field), so the sub-field goes into
            // the message instead.
            let player = pla
                .as_str()
                .and_then(Player::parse)
                .ok_or_else(|| self.err(field, "player: Must be \"b\" or \"w\""))?;
            let vertices = "moves: Must be an array of GTP board vertices";
            let mut moves = Vec::new();
            for m in mvs.as_array().ok_or_else(|| self.err(field, vertices))? {
                let s = m.as_str().ok_or_else(|| self.err(field, vertices))?;
                let mv = parse_vertex(s, x_size, y_size, true).ok_or_else(|| {
                    self.err(field, format!("moves: Could not parse board location: {s}"))
                })?;
                moves.push(mv);
            }
            let until_depth = integer_in(depth, 1, 1_000_000_000)
                .ok_or_else(|| self.err(field, "untilDepth: Must be a positive integer"))?
                as u32;
            if is_allow && entries.iter().any(|e| e.player == player) {
                return Err(self.err(
                    field,
                    "Cannot specify allowMoves more than once for the same player",
                ));
            }
            entries.push(RestrictionEntry {
                player,
                moves,
                until_depth,
            });
        }
        Ok(Some(if is_allow {
            MoveRestriction::Allow(entries)
        } else {
            MoveRestriction::Avoid(entries)
        }))
    }
}

impl FieldParser<'_> {
    /// `tsumego`: `{"region", "goal", "target", "koThreats"}`, every
    /// sub-field optional (`region` and `goal` default to `"auto"`,
    /// `koThreats` to `"none"`). Errors name the field `tsumego` and the
    /// sub-field in the message.
    fn tsumego(&self, x_size: usize, y_size: usize) -> Result<Option<TsumegoRequest>, QueryError> {
        let Some(v) = self.get("tsumego") else {
            return Ok(None);
        };
        let field = "tsumego";
        let Value::Object(m) = v else {
            return Err(self.err(
                field,
                "Must be an object with optional subfields 'region', 'goal', 'target', 'koThreats'",
            ));
        };
        if let Some(k) = m
            .keys()
            .find(|k| !["region", "goal", "target", "koThreats"].contains(&k.as_str()))
        {
            return Err(self.err(
                field,
                format!("Unknown subfield '{k}': expected 'region', 'goal', 'target', 'koThreats'"),
            ));
        }
        let text = |key: &str| -> Result<Option<&str>, QueryError> {
            match m.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(self.err(field, format!("{key}: Must be a string"))),
            }
        };
        let region = match m.get("region") {
            None => Ok(RegionSpec::Auto),
            Some(Value::String(s)) => tsumego::parse_region_text(s, x_size, y_size),
            Some(Value::Array(list)) => {
                let mut points = Vec::with_capacity(list.len());
                for p in list {
                    let s = p.as_str().ok_or_else(|| {
                        self.err(field, "region: Must be \"auto\", a rectangle such as \"A14-H19\", or an array of GTP board vertices")
                    })?;
                    points.push(s);
                }
                tsumego::parse_region_points(&points, x_size, y_size)
            }
            Some(_) => {
                return Err(self.err(
                    field,
                    "region: Must be \"auto\", a rectangle such as \"A14-H19\", or an array of GTP board vertices",
                ))
            }
        }
        .map_err(|e| self.err(field, format!("region: {e}")))?;
        // Fixed point sets are checked now (emptiness, size); "auto" only
        // once the stones are known.
        if let RegionSpec::Points(points) = &region {
            tsumego::Region::from_points(points, x_size, y_size)
                .map_err(|e| self.err(field, format!("region: {e}")))?;
        }
        let goal = match text("goal")? {
            None => GoalSpec::Auto,
            Some(s) => tsumego::parse_goal(s).map_err(|e| self.err(field, e.to_string()))?,
        };
        let target = match text("target")? {
            None => None,
            Some(s) => Some(
                tsumego::parse_point(s, x_size, y_size)
                    .map_err(|e| self.err(field, format!("target: {e}")))?,
            ),
        };
        let ko_threats = match text("koThreats")? {
            None => KoThreats::None,
            Some(s) => tsumego::parse_ko_threats(s).map_err(|e| self.err(field, e.to_string()))?,
        };
        Ok(Some(TsumegoRequest {
            region,
            goal,
            target,
            ko_threats,
        }))
    }
}

/// A JSON integer within `[min, max]`.
fn integer_in(v: &Value, min: i64, max: i64) -> Option<i64> {
    v.as_i64().filter(|x| (min..=max).contains(x))
}

/// A vertex on this board (a pass only where allowed).
fn parse_vertex(s: &str, x_size: usize, y_size: usize, allow_pass: bool) -> Option<Move> {
    match Move::parse(s, x_size, y_size) {
        Ok(Move::Pass) if !allow_pass => None,
        Ok(mv) => Some(mv),
        Err(_) => None,
    }
}
