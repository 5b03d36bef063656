use super::*;
use crate::game::WhiteHandicapBonusRule;
use serde_json::json;

fn parse(v: Value) -> Parsed {
    parse_line(&v.to_string(), &ParseOptions::default())
}

fn base() -> Value {
    json!({"id":"q","moves":[["B","D4"],["w","q16"]],"rules":"tromp-taylor","komi":7.5,
           "boardXSize":19,"boardYSize":19})
}

fn with(key: &str, value: Value) -> Value {
    let mut q = base();
    q[key] = value;
    q
}

fn without(key: &str) -> Value {
    let mut q = base();
    q.as_object_mut().unwrap().remove(key);
    q
}

fn query(v: Value) -> AnalyzeQuery {
    match parse(v).result {
        Ok(Request::Analyze(q)) => *q,
        other => panic!("expected a query, got {other:?}"),
    }
}

/// The field an error names.
fn err_field(v: Value) -> String {
    match parse(v).result {
        Err(QueryError::Field { field, id, .. }) => {
            assert_eq!(id, "q");
            field
        }
        other => panic!("expected a field error, got {other:?}"),
    }
}

fn general_error(line: &str) -> String {
    match parse_line(line, &ParseOptions::default()).result {
        Err(QueryError::General(m)) => m,
        other => panic!("expected a general error, got {other:?}"),
    }
}

#[test]
fn minimal_query_defaults() {
    let q = query(base());
    assert_eq!(q.id, "q");
    assert_eq!((q.board_x_size, q.board_y_size), (19, 19));
    assert_eq!(q.moves.len(), 2);
    assert_eq!(q.moves[1].player, Player::White);
    assert_eq!(q.moves[1].mv.to_gtp(19, 19), "Q16");
    assert_eq!(q.analyze_turns, vec![2]);
    assert_eq!(q.turn_priorities, vec![0]);
    assert_eq!(q.rules, Rules::tromp_taylor());
    assert!(!q.include_policy && !q.include_ownership);
    assert_eq!(q.max_visits, None);
    assert_eq!(q.restriction, None);
    assert!(parse(base()).warnings.is_empty());
}

#[test]
fn general_errors() {
    assert!(general_error("this is not json {").contains("could not parse input line as json"));
    assert!(general_error("[1,2]").starts_with("Request line was valid json but was not an object"));
    assert_eq!(
        general_error(r#"{"moves":[]}"#),
        "Request must have a string \"id\" field"
    );
    assert_eq!(
        general_error(r#"{"id":5}"#),
        "Request must have a string \"id\" field"
    );
    // An unknown action is answered with the id, so the client can stop
    // waiting (KataGo answers without it).
    match parse_line(r#"{"id":"a","action":"bogus"}"#, &ParseOptions::default()).result {
        Err(QueryError::Field { id, field, message }) => {
            assert_eq!((id.as_str(), field.as_str()), ("a", "action"));
            assert!(message.starts_with("'action' field must be"), "{message}");
        }
        other => panic!("expected a field error with the id, got {other:?}"),
    }
}

#[test]
fn actions() {
    let act = |v: Value| match parse(v).result {
        Ok(Request::Action(a)) => a,
        other => panic!("expected an action, got {other:?}"),
    };
    let a = act(json!({"id":"a","action":"query_version"}));
    assert_eq!(a.action, Action::QueryVersion);
    assert_eq!(a.echo.len(), 2);
    assert_eq!(
        act(json!({"id":"a","action":"query_models"})).action,
        Action::QueryModels
    );
    assert_eq!(
        act(json!({"id":"a","action":"clear_cache"})).action,
        Action::ClearCache
    );
    assert_eq!(
        act(json!({"id":"a","action":"terminate","terminateId":"x","turnNumbers":[1,2]})).action,
        Action::Terminate {
            terminate_id: "x".into(),
            turn_numbers: Some(vec![1, 2])
        }
    );
    assert_eq!(
        act(json!({"id":"a","action":"terminate_all"})).action,
        Action::TerminateAll { turn_numbers: None }
    );
    let field = |v: Value| match parse(v).result {
        Err(QueryError::Field { field, .. }) => field,
        other => panic!("expected a field error, got {other:?}"),
    };
    assert_eq!(field(json!({"id":"a","action":"terminate"})), "terminateId");
    assert_eq!(
        field(json!({"id":"a","action":"terminate_all","turnNumbers":"x"})),
        "turnNumbers"
    );
}

#[test]
fn board_sizes() {
    assert_eq!(err_field(with("boardXSize", json!(0))), "boardXSize");
    assert_eq!(err_field(with("boardXSize", json!(40))), "boardXSize");
    assert_eq!(err_field(with("boardXSize", json!(9.5))), "boardXSize");
    assert_eq!(err_field(without("boardYSize")), "boardYSize");
    let mut v = with("boardXSize", json!(7));
    v["boardYSize"] = json!(11);
    v["moves"] = json!([["B", "G11"]]);
    let q = query(v);
    assert_eq!((q.board_x_size, q.board_y_size), (7, 11));
}

#[test]
fn moves_and_stones() {
    assert_eq!(err_field(with("moves", json!([["B", "Z99"]]))), "moves");
    assert_eq!(err_field(with("moves", json!([["X", "D4"]]))), "moves");
    assert_eq!(err_field(with("moves", json!("D4"))), "moves");
    assert_eq!(err_field(with("moves", json!([["B"]]))), "moves");
    assert_eq!(err_field(without("moves")), "moves");
    assert_eq!(
        err_field(with("initialStones", json!([["B", "pass"]]))),
        "initialStones"
    );
    // "aa" is not a vertex.
    assert_eq!(err_field(with("moves", json!([["B", "aa"]]))), "moves");
    let q = query(with("moves", json!([["B", "pass"], ["W", "(2,3)"]])));
    assert_eq!(q.moves[0].mv, Move::Pass);
    assert_eq!(q.moves[1].mv.to_gtp(19, 19), "C16");
    let q = query(with("initialStones", json!([["B", "D4"], ["W", "C3"]])));
    assert_eq!(q.initial_stones.len(), 2);
}

#[test]
fn initial_player() {
    assert_eq!(
        query(with("initialPlayer", json!("W"))).initial_player,
        Some(Player::White)
    );
    assert_eq!(
        err_field(with("initialPlayer", json!("X"))),
        "initialPlayer"
    );
    assert_eq!(err_field(with("initialPlayer", json!(1))), "initialPlayer");
}

#[test]
fn analyze_turns_and_priorities() {
    let q = query(with("analyzeTurns", json!([2, 0, 1, 0])));
    assert_eq!(q.analyze_turns, vec![0, 1, 2]);
    assert_eq!(err_field(with("analyzeTurns", json!([3]))), "analyzeTurns");
    assert_eq!(err_field(with("analyzeTurns", json!([-1]))), "analyzeTurns");
    assert_eq!(err_field(with("analyzeTurns", json!("0"))), "analyzeTurns");

    let mut v = with("analyzeTurns", json!([2, 0]));
    v["priorities"] = json!([5, -3]);
    let q = query(v.clone());
    assert_eq!(q.analyze_turns, vec![0, 2]);
    assert_eq!(q.turn_priorities, vec![-3, 5]);
    v["priorities"] = json!([5]);
    assert_eq!(err_field(v.clone()), "priorities");
    v["priorities"] = json!([5, 1]);
    v["priority"] = json!(3);
    assert_eq!(err_field(v), "priority");
    assert_eq!(err_field(with("priorities", json!([1]))), "priorities");

    let q = query(with("priority", json!(10)));
    assert_eq!(q.turn_priorities, vec![10]);
    assert_eq!(err_field(with("priority", json!(1.5))), "priority");
}

#[test]
fn rules_komi_and_handicap_bonus() {
    assert_eq!(err_field(without("rules")), "rules");
    assert_eq!(err_field(with("rules", json!(3))), "rules");
    assert_eq!(err_field(with("rules", json!("not-a-ruleset"))), "rules");
    let q = query(with("rules", json!({"ko":"SIMPLE","scoring":"TERRITORY"})));
    assert_eq!(q.rules.ko_rule, crate::game::KoRule::Simple);
    assert_eq!(q.rules.komi, 7.5, "the query's komi");
    let mut v = without("komi");
    v["rules"] = json!("japanese");
    assert_eq!(
        query(v).rules.komi,
        6.5,
        "KataGo's default komi for territory scoring"
    );
    assert_eq!(query(with("komi", json!(-6))).rules.komi, -6.0);
    assert_eq!(err_field(with("komi", json!(1000))), "komi");
    assert_eq!(err_field(with("komi", json!(7.3))), "komi");
    assert_eq!(err_field(with("komi", json!("7.5"))), "komi");
    assert_eq!(
        query(with("whiteHandicapBonus", json!("N-1")))
            .rules
            .white_handicap_bonus_rule,
        WhiteHandicapBonusRule::NMinusOne
    );
    assert_eq!(
        err_field(with("whiteHandicapBonus", json!("M"))),
        "whiteHandicapBonus"
    );
    assert_eq!(
        err_field(with("whiteHandicapBonus", json!(0))),
        "whiteHandicapBonus"
    );
}

#[test]
fn search_fields() {
    let mut v = base();
    v["maxVisits"] = json!(1);
    v["analysisPVLen"] = json!(3);
    v["rootFpuReductionMax"] = json!(0);
    v["rootPolicyTemperature"] = json!(1.5);
    v["reportDuringSearchEvery"] = json!(0.2);
    v["overrideSettings"] = json!({"wideRootNoise": 0.0, "humanSLProfile": "rank_3d"});
    let q = query(v);
    assert_eq!(q.max_visits, Some(1));
    assert_eq!(q.analysis_pv_len, Some(3));
    assert_eq!(q.root_fpu_reduction_max, Some(0.0));
    assert_eq!(q.root_policy_temperature, Some(1.5));
    assert_eq!(q.report_during_search_every, Some(0.2));
    assert_eq!(q.first_report_during_search_after, None);
    assert_eq!(
        q.override_settings,
        vec![
            ("humanSLProfile".to_string(), json!("rank_3d")),
            ("wideRootNoise".to_string(), json!(0.0))
        ]
    );
    assert_eq!(err_field(with("maxVisits", json!(0))), "maxVisits");
    assert_eq!(
        err_field(with("analysisPVLen", json!(1001))),
        "analysisPVLen"
    );
    assert_eq!(
        err_field(with("rootFpuReductionMax", json!(3))),
        "rootFpuReductionMax"
    );
    assert_eq!(
        err_field(with("rootPolicyTemperature", json!(0))),
        "rootPolicyTemperature"
    );
    assert_eq!(
        err_field(with("reportDuringSearchEvery", json!(0))),
        "reportDuringSearchEvery"
    );
    assert_eq!(
        err_field(with("overrideSettings", json!([1]))),
        "overrideSettings"
    );
}

#[test]
fn booleans() {
    for key in [
        "includeOwnership",
        "includeOwnershipStdev",
        "includeMovesOwnership",
        "includeMovesOwnershipStdev",
        "includePolicy",
        "includePVVisits",
        "includeNoResultValue",
    ] {
        assert_eq!(err_field(with(key, json!("yes"))), key);
        assert!(query(with(key, json!(false))).analyze_turns == vec![2]);
    }
    let mut v = base();
    v["includeOwnership"] = json!(true);
    v["includePVVisits"] = json!(true);
    let q = query(v);
    assert!(q.include_ownership && q.include_pv_visits && !q.include_policy);
}

#[test]
fn avoid_and_allow_moves() {
    let q = query(with(
        "avoidMoves",
        json!([{"player":"B","moves":["Q16","pass"],"untilDepth":1}]),
    ));
    let Some(MoveRestriction::Avoid(e)) = q.restriction else {
        panic!("no restriction")
    };
    assert_eq!(e[0].player, Player::Black);
    assert_eq!(e[0].moves[1], Move::Pass);
    assert_eq!(e[0].until_depth, 1);
    assert_eq!(
        err_field(with("avoidMoves", json!([{"player":"B","moves":["D4"]}]))),
        "avoidMoves"
    );
    assert_eq!(
        err_field(with(
            "avoidMoves",
            json!([{"player":"B","moves":["D4"],"untilDepth":0}])
        )),
        "avoidMoves"
    );
    assert_eq!(
        err_field(with(
            "allowMoves",
            json!([{"player":"B","moves":["Z99"],"untilDepth":1}])
        )),
        "allowMoves"
    );
    let two = json!([{"player":"B","moves":["D4"],"untilDepth":1},
                     {"player":"B","moves":["C3"],"untilDepth":1}]);
    assert_eq!(err_field(with("allowMoves", two.clone())), "allowMoves");
    assert!(matches!(
        query(with("avoidMoves", two)).restriction,
        Some(MoveRestriction::Avoid(_))
    ));
    let mut v = with("allowMoves", json!([]));
    v["avoidMoves"] = json!([]);
    assert_eq!(err_field(v), "allowMoves");
}

#[test]
fn unknown_fields_warn_but_run() {
    let p = parse(with("rootNumSymmetriesToSample", json!(2)));
    assert!(p.result.is_ok());
    assert_eq!(p.warnings.len(), 1);
    assert_eq!(p.warnings[0].field, "rootNumSymmetriesToSample");
    assert_eq!(p.warnings[0].message, UNUSED_FIELD_WARNING);
    let quiet = parse_line(
        &with("foo", json!(1)).to_string(),
        &ParseOptions {
            warn_unused_fields: false,
        },
    );
    assert!(quiet.warnings.is_empty());
}

#[test]
fn error_json_shapes() {
    let e = QueryError::field("q", "komi", "bad");
    assert_eq!(
        e.to_json().to_string(),
        r#"{"error":"bad","field":"komi","id":"q"}"#
    );
    assert_eq!(
        QueryError::General("x".into()).to_json().to_string(),
        r#"{"error":"x"}"#
    );
    let w = QueryWarning::new("q", "f", "w");
    assert_eq!(
        w.to_json().to_string(),
        r#"{"field":"f","id":"q","warning":"w"}"#
    );
}

proptest::proptest! {
    #[test]
    fn never_panics_on_any_line(s in "\\PC{0,80}") {
        let _ = parse_line(&s, &ParseOptions::default());
    }
}

/// The message of a field error.
fn err_message(v: Value) -> String {
    match parse(v).result {
        Err(QueryError::Field { message, .. }) => message,
        other => panic!("expected a field error, got {other:?}"),
    }
}

#[test]
fn tsumego_field_parses_region_goal_target_and_threats() {
    use crate::tsumego::{Goal, GoalSpec, KoThreats, RegionSpec};
    let q = query(with(
        "tsumego",
        json!({"region":"A14-H19","goal":"kill","target":"C17","koThreats":"none"}),
    ));
    let t = q.tsumego.expect("tsumego");
    let RegionSpec::Points(points) = &t.region else {
        panic!("{t:?}")
    };
    assert_eq!(points.len(), 8 * 6);
    assert_eq!(t.goal, GoalSpec::Given(Goal::Kill));
    assert_eq!(
        t.target.map(|l| Move::Play(l).to_gtp(19, 19)).as_deref(),
        Some("C17")
    );
    assert_eq!(t.ko_threats, KoThreats::None);
    let t = query(with("tsumego", json!({}))).tsumego.expect("tsumego");
    assert_eq!((t.region, t.goal), (RegionSpec::Auto, GoalSpec::Auto));
    let t = query(with("tsumego", json!({"region":["C16","C17"]})))
        .tsumego
        .expect("tsumego");
    assert!(matches!(t.region, RegionSpec::Points(p) if p.len() == 2));
    // No "unexpected field" warning.
    assert!(parse(with("tsumego", json!({}))).warnings.is_empty());
}

#[test]
fn bad_tsumego_fields_name_the_field_and_say_why() {
    let bad = [
        (json!("auto"), "Must be an object"),
        (json!({"region":[]}), "empty"),
        (json!({"region":["Z99"]}), "not on the 19x19 board"),
        (
            json!({"region":"A1-T19"}),
            "at most half the board (180 points)",
        ),
        (json!({"region":"corner"}), "cannot read region"),
        (json!({"region":5}), "region: Must be"),
        (json!({"goal":"capture"}), "goal must be"),
        (json!({"target":"pass"}), "target:"),
        (json!({"koThreats":"both"}), "koThreats must be"),
        (json!({"regoin":"auto"}), "Unknown subfield 'regoin'"),
    ];
    for (value, text) in bad {
        let v = with("tsumego", value.clone());
        assert_eq!(err_field(v.clone()), "tsumego", "{value}");
        let message = err_message(v);
        assert!(message.contains(text), "{value}: {message}");
    }
    let mut both = with("tsumego", json!({}));
    both["allowMoves"] = json!([{"player":"B","moves":["D4"],"untilDepth":1}]);
    assert_eq!(err_field(both), "tsumego");
}
