//! Rules, parameter and clock commands: `kata-set-rules` and friends,
//! `kata-get-param`/`kata-set-param(s)`, `time_settings`, `time_left`, and
//! `kata-raw-nn`.

use crate::game::{ByPlayer, Player, Rules};
use crate::timecontrol::{self as time, TimeControls};

use super::commands::strs;
use super::engine::GtpEngine;
use crate::numfmt::{format_g, parse_bool, parse_finite_f64, parse_i64};

impl GtpEngine {
    pub(super) fn apply_rules(&mut self, rules: Rules) -> Result<String, String> {
        // KataGo refuses rules the net was not trained for rather than
        // playing under other ones.
        if self.bot.lock().supported_rules(&rules).is_some() {
            return Err(format!(
                "Rules {} are not supported by this neural net version",
                rules.to_json(false)
            ));
        }
        self.game.set_rules_keep_komi(rules);
        crate::logfile::line(&format!(
            "Changed rules to {}",
            rules.to_string_no_komi_maybe_nice()
        ));
        Ok(String::new())
    }

    pub(super) fn set_rules_text(&mut self, text: &str) -> Result<String, String> {
        let rules = Rules::parse_without_komi(text, self.game.rules().komi)
            .map_err(|e| format!("Unknown rules '{text}', {e}"))?;
        self.apply_rules(rules)
    }

    pub(super) fn set_rule(&mut self, a: &[String]) -> Result<String, String> {
        let [key, value] = a else {
            return Err(format!(
                "Expected two arguments for kata-set-rule but got '{}'",
                a.join(" ")
            ));
        };
        let mut json = self.game.rules().to_json(false);
        let Some(slot) = json.get_mut(key.as_str()) else {
            return Err(format!("Unknown rules option: {key}"));
        };
        *slot = match parse_bool(value) {
            Some(b) if slot.is_boolean() => serde_json::Value::Bool(b),
            _ if slot.is_boolean() => return Err(format!("Invalid value for {key}: {value}")),
            _ => serde_json::Value::String(value.to_ascii_uppercase()),
        };
        let rules = Rules::parse_without_komi(&json.to_string(), self.game.rules().komi)
            .map_err(|e| e.to_string())?;
        self.apply_rules(rules)
    }

    pub(super) fn kgs_rules(&mut self, a: &[String]) -> Result<String, String> {
        let s = a
            .first()
            .map(|s| s.trim().to_ascii_lowercase())
            .ok_or("Expected one argument kgs-rules")?;
        let name = match s.as_str() {
            "chinese" => "chinese-kgs",
            "aga" | "japanese" | "new_zealand" => s.as_str(),
            _ => return Err(format!("Unknown rules '{s}'")),
        };
        let rules =
            Rules::parse_without_komi(name, self.game.rules().komi).map_err(|e| e.to_string())?;
        self.apply_rules(rules)
    }

    pub(super) fn param_names(&self) -> Vec<String> {
        let mut names: Vec<String> = [
            "allowResignation",
            "ponderingEnabled",
            "delayMoveScale",
            "delayMoveMax",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(self.bot.lock().param_names());
        names
    }

    pub(super) fn get_param(&self, name: &str) -> Option<String> {
        let s = &self.settings;
        match name {
            "allowResignation" => Some(s.allow_resignation.to_string()),
            "ponderingEnabled" => Some(s.pondering_enabled.to_string()),
            "delayMoveScale" => Some(format_g(s.delay_move_scale, false)),
            "delayMoveMax" => Some(format_g(s.delay_move_max, false)),
            _ => self.bot.lock().get_param(name),
        }
    }

    pub(super) fn get_params_json(&self) -> String {
        let mut m = serde_json::Map::new();
        for name in self.param_names() {
            if let Some(v) = self.get_param(&name) {
                let value = serde_json::from_str(&v).unwrap_or(serde_json::Value::String(v));
                m.insert(name, value);
            }
        }
        serde_json::Value::Object(m).to_string()
    }

    /// Applies `(name, value)` pairs; all are checked before any is set so
    /// that a bad one changes nothing.
    pub(super) fn set_params(&mut self, pairs: &[(String, String)]) -> Result<String, String> {
        let err = |m: String| format!("Could not set params: {m}");
        let known = self.param_names();
        for (k, v) in pairs {
            if !known.contains(k) {
                return Err(err(format!(
                    "Unrecognized or non-overridable parameter in kata-set-params: {k}"
                )));
            }
            let ok = match k.as_str() {
                "allowResignation" | "ponderingEnabled" => parse_bool(v).is_some(),
                "delayMoveScale" | "delayMoveMax" => parse_finite_f64(v).is_some_and(|x| x >= 0.0),
                _ => true,
            };
            if !ok {
                return Err(err(format!("Invalid value for {k}: '{v}'")));
            }
        }
        for (k, v) in pairs {
            let s = &mut self.settings;
            match k.as_str() {
                "allowResignation" => s.allow_resignation = parse_bool(v).unwrap_or(false),
                "ponderingEnabled" => s.pondering_enabled = parse_bool(v).unwrap_or(false),
                "delayMoveScale" => s.delay_move_scale = parse_finite_f64(v).unwrap_or(0.0),
                "delayMoveMax" => s.delay_move_max = parse_finite_f64(v).unwrap_or(0.0),
                _ => self.bot.lock().set_param(k, v).map_err(err)?,
            }
        }
        Ok(String::new())
    }

    pub(super) fn set_params_json(&mut self, text: &str) -> Result<String, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("Could not set params: {e}"))?;
        let obj = value
            .as_object()
            .ok_or("Could not set params: Argument to kata-set-params must be a json object")?;
        let pairs: Vec<(String, String)> = obj
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect();
        self.set_params(&pairs)
    }

    pub(super) fn set_clocks(
        &mut self,
        tc: Result<TimeControls, time::TimeControlError>,
    ) -> Result<String, String> {
        let tc = tc.map_err(|e| e.to_string())?;
        self.clocks = ByPlayer::both(tc);
        Ok(String::new())
    }

    /// `kata-get-models`: a JSON list of the loaded nets, as KataGo's.
    pub(super) fn models_json(&self) -> String {
        let list = self
            .bot
            .lock()
            .models()
            .iter()
            .map(|m| m.to_json())
            .collect();
        serde_json::Value::Array(list).to_string()
    }

    /// `kata-raw-nn [COLOR] all|0-7 [OPTIMISM]`.
    pub(super) fn raw_nn(&mut self, a: &[String]) -> Result<String, String> {
        let (pla, symmetry, optimism) = self.raw_nn_args(a, true).map_err(|why| {
            format!(
                "{why} for kata-raw-nn (expected an optional color, a symmetry 'all' or index [0-7], and an optional optimism [0-1])"
            )
        })?;
        self.stop_background();
        let game = self.game.clone();
        self.bot.lock().raw_nn(&game, pla, symmetry, optimism)
    }

    /// `kata-raw-human-nn [COLOR] all|0-7`: the `-human-model` net.
    pub(super) fn raw_human_nn(&mut self, a: &[String]) -> Result<String, String> {
        let (pla, symmetry, _) = self.raw_nn_args(a, false).map_err(|why| {
            format!(
                "{why} for kata-raw-human-nn (expected an optional color followed by a symmetry 'all' or index [0-7])"
            )
        })?;
        self.stop_background();
        let game = self.game.clone();
        self.bot.lock().raw_human_nn(&game, pla, symmetry)
    }

    /// KataGo's `parseRawNNArgs`: an optional color (default: the player
    /// to move), a symmetry (`None` for `all`) and, where allowed, an
    /// optional policy optimism in [0, 1].
    fn raw_nn_args(
        &self,
        a: &[String],
        allow_optimism: bool,
    ) -> Result<(Player, Option<usize>, Option<f64>), String> {
        let mut i = 0;
        let mut pla = self.game.next_pla();
        if let Some(p) = a.first().and_then(|s| Player::parse(s)) {
            pla = p;
            i += 1;
        }
        let symmetry = match a.get(i).map(|s| s.trim().to_ascii_lowercase()) {
            None => return Err("Expected a symmetry argument 'all' or index [0-7]".into()),
            Some(s) if s == "all" => None,
            Some(s) => match parse_i64(&s) {
                Some(n) if (0..8).contains(&n) => Some(n as usize),
                _ => {
                    return Err(format!(
                        "Expected a symmetry argument 'all' or index [0-7] but got '{}'",
                        a[i]
                    ))
                }
            },
        };
        i += 1;
        let mut optimism = None;
        if let (true, Some(s)) = (allow_optimism, a.get(i)) {
            optimism = parse_finite_f64(s)
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| format!("Expected an optimism value in [0,1] but got '{s}'"))
                .map(Some)?;
            i += 1;
        }
        if i < a.len() {
            return Err(format!("Unexpected extra argument '{}'", a[i]));
        }
        Ok((pla, symmetry, optimism))
    }

    pub(super) fn time_left(&mut self, a: &[String]) -> Result<String, String> {
        let (pla, seconds, stones) = time::parse_time_left(&strs(a)).map_err(|e| e.to_string())?;
        self.clocks[pla]
            .time_left(seconds, stones)
            .map_err(|e| e.to_string())?;
        Ok(String::new())
    }
}
