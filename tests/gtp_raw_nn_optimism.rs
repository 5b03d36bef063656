//! `kata-raw-nn` without an optimism argument answers with the genmove
//! search's `rootPolicyOptimism` (KataGo's default, 0.2 for GTP), not 0.
//!
//! Only nets with an optimistic policy head (model version 12 and up) show
//! the difference, so this uses the project's own version-15 net in
//! `models/` (trained on 9x9, the size played here).
//! Checked against KataGo 1.17.2: for our exported b2c16 nets, KataGo's
//! `kata-raw-nn 0` equals ours with optimism 0.2 to the printed digits.

#[path = "common/gtp.rs"]
mod gtp;

/// Runs one GTP session on the project's own net and returns the body of
/// each answer, in order.
fn session(overrides: &str, commands: &[&str]) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let nets = engine::setup::models_in(&root.join("models"));
    let net = nets.first().expect("the project's own net in models/");
    let mut input = commands.join("\n");
    input.push_str("\nquit\n");
    let args = [
        "-model".as_ref(),
        net.as_os_str(),
        "-override-config".as_ref(),
        overrides.as_ref(),
    ];
    gtp::session(&args, &input).0
}

/// The policy numbers of a `kata-raw-nn` answer.
fn policy(answer: &str) -> Vec<f64> {
    assert!(answer.starts_with('='), "error answer: {answer}");
    answer
        .split("policy\n")
        .nth(1)
        .and_then(|rest| rest.split("policyPass").next())
        .expect("policy block")
        .split_whitespace()
        .map(|t| t.parse::<f64>().unwrap_or(f64::NAN))
        .collect()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .filter(|(x, y)| !x.is_nan() && !y.is_nan())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn default_optimism_is_root_policy_optimism() {
    let setup = ["boardsize 9", "komi 7", "play B E5", "play W C3"];
    let mut cmds = setup.to_vec();
    cmds.extend(["kata-raw-nn 0", "kata-raw-nn 0 0.2", "kata-raw-nn 0 0"]);
    let answers = session("logAllGTPCommunication=false", &cmds);
    let n = setup.len();
    let (default, explicit, zero) = (
        policy(&answers[n]),
        policy(&answers[n + 1]),
        policy(&answers[n + 2]),
    );
    assert_eq!(default.len(), 81);
    assert_eq!(
        max_diff(&default, &explicit),
        0.0,
        "default != optimism 0.2"
    );
    assert!(
        max_diff(&default, &zero) > 5e-6,
        "this net's optimistic head should change the policy (by ~2e-5 at 6 printed digits)"
    );

    // A configured rootPolicyOptimism is the default too.
    let answers = session("logAllGTPCommunication=false,rootPolicyOptimism=0", &cmds);
    assert_eq!(
        max_diff(&policy(&answers[n]), &policy(&answers[n + 2])),
        0.0
    );
}
