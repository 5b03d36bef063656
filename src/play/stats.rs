//! Match statistics: Elo from a score with a confidence interval, overall
//! ratings of several bots (Bradley-Terry), and the sequential probability
//! ratio test (SPRT) that stops a two-bot match once it is decided.
//!
//! Conventions: a game scores 1 for a win, 1/2 for a draw, 0 for a loss;
//! Elo is the logistic scale, `P(a beats b) = 1 / (1 + 10^((Rb - Ra) / 400))`.

/// Wins, losses and draws of one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Wld {
    /// Games won.
    pub wins: u64,
    /// Games lost.
    pub losses: u64,
    /// Games drawn (and games without result).
    pub draws: u64,
}

impl Wld {
    /// Games in all.
    pub fn games(&self) -> u64 {
        self.wins + self.losses + self.draws
    }

    /// Score points: wins plus half the draws.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Mean score per game (0.5 with no games).
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            self.points() / n as f64
        }
    }

    /// The same games from the opponent's side.
    pub fn flipped(&self) -> Wld {
        Wld {
            wins: self.losses,
            losses: self.wins,
            draws: self.draws,
        }
    }
}

/// Results of game pairs from one side's view (fishtest's "pentanomial"
/// counts): a pair is one opening played twice with colours swapped, and
/// `counts[k]` is the number of pairs in which the side scored `k / 2`
/// points (0, 1/2, 1, 3/2 or 2; a draw is half a point). The two games of
/// a pair share their opening, so they are not independent: an opening
/// that favours one colour makes splits more likely than two coin tosses
/// would, one that favours one bot makes 2-0s more likely. Counting pairs
/// gives the SPRT and the Elo interval the variance the games really have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pentanomial {
    /// Pairs by the side's points in half points: `counts[0]` lost both
    /// games, `counts[4]` won both.
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// Pairs in all.
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Counts one pair in which the side scored `half_points` half points
    /// (0 to 4; more is counted as 4).
    pub fn add(&mut self, half_points: usize) {
        self.counts[half_points.min(4)] += 1;
    }
}

/// Match results as the Elo interval and the SPRT read them: how many of
/// each kind of outcome (a game for [`Wld`], a pair of games for
/// [`Pentanomial`]) there were, and each kind's mean score per game.
pub trait Outcomes {
    /// `(mean score per game, count)` of each kind of outcome, lowest
    /// score first.
    fn tallies(&self) -> Vec<(f64, u64)>;
}

impl Outcomes for Wld {
    fn tallies(&self) -> Vec<(f64, u64)> {
        vec![(0.0, self.losses), (0.5, self.draws), (1.0, self.wins)]
    }
}

impl Outcomes for Pentanomial {
    fn tallies(&self) -> Vec<(f64, u64)> {
        (0..5).map(|k| (k as f64 / 4.0, self.counts[k])).collect()
    }
}

/// `results`' kinds of outcome as `(mean score per game, count)`, the
/// counts as reals.
fn weighted<O: Outcomes>(results: &O) -> Vec<(f64, f64)> {
    results
        .tallies()
        .into_iter()
        .map(|(a, c)| (a, c as f64))
        .collect()
}

/// Outcomes counted, and their mean score per game (0.5 with none).
fn mean_score(tallies: &[(f64, f64)]) -> (f64, f64) {
    let n: f64 = tallies.iter().map(|&(_, c)| c).sum();
    if n == 0.0 {
        return (0.0, 0.5);
    }
    (n, tallies.iter().map(|&(a, c)| a * c).sum::<f64>() / n)
}

/// Variance of the score per outcome (0 with none).
fn variance(tallies: &[(f64, f64)]) -> f64 {
    let (n, s) = mean_score(tallies);
    if n == 0.0 {
        return 0.0;
    }
    tallies
        .iter()
        .map(|&(a, c)| c * (a - s).powi(2))
        .sum::<f64>()
        / n
}

/// [`variance`], except when every outcome was of one kind (variance 0,
/// which would make intervals and the SPRT meaningless): then the
/// variance with half an outcome added to each kind.
fn variance_regularized(tallies: &[(f64, f64)]) -> f64 {
    let var = variance(tallies);
    if var > 0.0 || mean_score(tallies).0 == 0.0 {
        return var;
    }
    let padded: Vec<(f64, f64)> = tallies.iter().map(|&(a, c)| (a, c + 0.5)).collect();
    variance(&padded)
}

/// Elo difference of a mean score `s` (0..1): `-400 log10(1/s - 1)`;
/// infinite at 0 and 1.
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

/// Expected score of a side `elo` points stronger.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// An Elo estimate with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloEstimate {
    /// Elo of the mean score.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

/// Elo difference of one side from its results (games as [`Wld`], or pairs
/// of games as [`Pentanomial`]), with a 95% confidence interval (as
/// cutechess-cli computes it for games): the mean score `s` (draws as half
/// a win) has standard error `sqrt(var / n)`, `var` the variance of the
/// score per outcome and `n` the outcomes; the interval `s ± 1.96 se`
/// (clipped to 0..1) is mapped through [`elo_from_score`]. Ends are
/// infinite when the score interval reaches 0 or 1. When every outcome
/// was of one kind the variance is that with half an outcome added to each
/// kind, so a clean sweep still gets a finite lower end (its estimate and
/// upper end are infinite).
pub fn elo_estimate<O: Outcomes>(results: &O) -> EloEstimate {
    let tallies = weighted(results);
    let (n, s) = mean_score(&tallies);
    if n == 0.0 {
        return EloEstimate {
            elo: 0.0,
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
        };
    }
    let se = (variance_regularized(&tallies) / n).sqrt();
    let z = 1.959_963_984_540_054;
    EloEstimate {
        elo: elo_from_score(s),
        low: elo_from_score((s - z * se).max(0.0)),
        high: elo_from_score((s + z * se).min(1.0)),
    }
}

/// Overall Elo of each bot from a table of pairwise results:
/// `table[i][j]` is bot i's record against bot j. Bradley-Terry maximum
/// likelihood (draws as half a win for each side), found with Hunter's MM
/// iteration `g_i <- W_i / sum_j n_ij / (g_i + g_j)` on `g = 10^(R/400)`.
/// `prior_draws` virtual drawn games are added to every pair that played,
/// so a bot that won or lost every game still gets a finite rating
/// (`0.0` for the plain maximum likelihood). Bot 0 is at 0; a bot with no
/// games, or not connected to bot 0 through games played, gets `None`.
pub fn bradley_terry(table: &[Vec<Wld>], prior_draws: f64) -> Vec<Option<f64>> {
    let k = table.len();
    // n[i][j]: games between i and j; w[i]: points of i.
    let mut n = vec![vec![0.0f64; k]; k];
    let mut w = vec![0.0f64; k];
    for i in 0..k {
        for j in 0..k {
            if i == j {
                continue;
            }
            let r = table[i].get(j).copied().unwrap_or_default();
            let r_back = table[j].get(i).copied().unwrap_or_default().flipped();
            // Games are recorded from both sides; take each once (i's view).
            let games = r.games().max(r_back.games()) as f64;
            let points = if r.games() >= r_back.games() {
                r.points()
            } else {
                r_back.points()
            };
            if games > 0.0 {
                n[i][j] = games + prior_draws;
                w[i] += points + 0.5 * prior_draws;
            }
        }
    }
    // Bots connected to bot 0.
    let mut connected = vec![false; k];
    if k > 0 {
        connected[0] = true;
        let mut frontier = vec![0];
        while let Some(i) = frontier.pop() {
            for j in 0..k {
                if n[i][j] > 0.0 && !connected[j] {
                    connected[j] = true;
                    frontier.push(j);
                }
            }
        }
    }
    let mut g = vec![1.0f64; k];
    for _ in 0..10_000 {
        let mut max_change = 0.0f64;
        for i in 0..k {
            if !connected[i] {
                continue;
            }
            let denom: f64 = (0..k)
                .filter(|&j| j != i && n[i][j] > 0.0)
                .map(|j| n[i][j] / (g[i] + g[j]))
                .sum();
            if denom <= 0.0 {
                continue;
            }
            // A bot with no points has rating -inf; keep it tiny but
            // positive so the others stay finite.
            let new = (w[i] / denom).max(1e-300);
            max_change = max_change.max((new.ln() - g[i].ln()).abs());
            g[i] = new;
        }
        // Renormalise so bot 0 stays at 1.
        let g0 = g[0];
        if g0 > 0.0 {
            for x in g.iter_mut() {
                *x /= g0;
            }
        }
        if max_change < 1e-12 {
            break;
        }
    }
    (0..k)
        .map(|i| {
            if !connected[i] || (i > 0 && n[i].iter().all(|&x| x == 0.0)) {
                None
            } else {
                Some(400.0 * g[i].log10())
            }
        })
        .collect()
}

/// An SPRT's hypotheses and error rates: H0 `elo = elo0` against H1
/// `elo = elo1` (logistic Elo of the first bot over the second), with
/// false-positive rate `alpha` and false-negative rate `beta`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sprt {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
}

/// The state of an SPRT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SprtDecision {
    /// Go on playing.
    Continue,
    /// Accept H0 (`elo0`).
    AcceptH0,
    /// Accept H1 (`elo1`).
    AcceptH1,
}

impl Sprt {
    /// Parses `elo0,elo1[,alpha,beta]` (alpha and beta default to 0.05).
    pub fn parse(text: &str) -> Result<Sprt, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let num = |s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("-sprt: {s:?} is not a number"))
        };
        let (elo0, elo1, alpha, beta) = match parts.as_slice() {
            [a, b] => (num(a)?, num(b)?, 0.05, 0.05),
            [a, b, c, d] => (num(a)?, num(b)?, num(c)?, num(d)?),
            _ => return Err(format!("-sprt wants elo0,elo1[,alpha,beta], got {text:?}")),
        };
        if elo1 <= elo0 {
            return Err(format!("-sprt: elo1 ({elo1}) must be above elo0 ({elo0})"));
        }
        for (name, p) in [("alpha", alpha), ("beta", beta)] {
            if !(p > 0.0 && p < 0.5) {
                return Err(format!("-sprt: {name} ({p}) must be in (0, 0.5)"));
            }
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
        })
    }

    /// Lower and upper LLR bounds (Wald): `ln(beta / (1 - alpha))` and
    /// `ln((1 - beta) / alpha)`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// Log-likelihood ratio of H1 over H0 after `results` (the first bot's,
    /// as games or as pairs of games): the generalised SPRT as fishtest
    /// computes it (`LLR_logistic`, for trinomial or pentanomial counts).
    /// The frequencies `p̂` of the kinds of outcome (counts of 0 replaced by
    /// 1e-3) are projected onto the distributions of mean score `s0` resp.
    /// `s1` (the expected scores at `elo0`, `elo1`) by maximum likelihood,
    /// `p_i = p̂_i / (1 + λ (a_i - s))` with `a_i` the kind's score and `λ`
    /// solved so the `p_i` sum to 1; then `LLR = Σ n_i ln(p1_i / p0_i)`.
    pub fn llr<O: Outcomes>(&self, results: &O) -> f64 {
        let tallies = weighted(results);
        if mean_score(&tallies).0 == 0.0 {
            return 0.0;
        }
        let scores: Vec<f64> = tallies.iter().map(|&(a, _)| a).collect();
        let counts: Vec<f64> = tallies
            .iter()
            .map(|&(_, c)| if c == 0.0 { 1e-3 } else { c })
            .collect();
        let total: f64 = counts.iter().sum();
        let freq: Vec<f64> = counts.iter().map(|c| c / total).collect();
        let p0 = mle_with_mean(&freq, &scores, score_from_elo(self.elo0));
        let p1 = mle_with_mean(&freq, &scores, score_from_elo(self.elo1));
        (0..counts.len())
            .map(|i| counts[i] * (p1[i] / p0[i]).ln())
            .sum()
    }

    /// Whether the test has decided after `results`.
    pub fn decide<O: Outcomes>(&self, results: &O) -> SprtDecision {
        let llr = self.llr(results);
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtDecision::AcceptH1
        } else if llr <= lo {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

/// The distribution over the kinds of outcome (scores `a`, lowest first,
/// the first below `t` and the last above) of mean score `t` (0 < t < 1)
/// closest to `freq` in likelihood: `p_i = freq_i / (1 + λ (a_i - t))`,
/// `λ` found by bisection on `Σ freq_i (a_i - t) / (1 + λ (a_i - t)) = 0`
/// (decreasing in `λ` on `(-1 / (a_max - t), 1 / (t - a_min))`, where
/// every `p_i` > 0).
fn mle_with_mean(freq: &[f64], a: &[f64], t: f64) -> Vec<f64> {
    let (a_min, a_max) = (a[0], a[a.len() - 1]);
    let t = t.clamp(a_min + 1e-9, a_max - 1e-9);
    let f = |l: f64| -> f64 {
        freq.iter()
            .zip(a)
            .map(|(&p, &ai)| p * (ai - t) / (1.0 + l * (ai - t)))
            .sum()
    };
    let (mut lo, mut hi) = (-1.0 / (a_max - t), 1.0 / (t - a_min));
    let span = hi - lo;
    lo += span * 1e-12;
    hi -= span * 1e-12;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let l = 0.5 * (lo + hi);
    let p: Vec<f64> = freq
        .iter()
        .zip(a)
        .map(|(&fi, &ai)| fi / (1.0 + l * (ai - t)))
        .collect();
    let sum: f64 = p.iter().sum();
    p.into_iter().map(|x| x / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wld(wins: u64, losses: u64, draws: u64) -> Wld {
        Wld {
            wins,
            losses,
            draws,
        }
    }

    #[test]
    fn elo_of_known_scores() {
        assert_eq!(elo_from_score(0.5), 0.0);
        // 0.75: -400 log10(1/3) = 190.85
        assert!((elo_from_score(0.75) - 190.848_501_887_865).abs() < 1e-9);
        assert!((elo_from_score(0.25) + 190.848_501_887_865).abs() < 1e-9);
        assert!((score_from_elo(190.848_501_887_865) - 0.75).abs() < 1e-12);
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
    }

    #[test]
    fn elo_interval_of_a_known_record() {
        // 60 W, 30 L, 10 D: s = 0.65, var = (60*0.35^2 + 30*0.65^2 +
        // 10*0.15^2)/100 = (7.35 + 12.675 + 0.225)/100 = 0.2025,
        // se = sqrt(0.2025/100) = 0.045, 1.96 se = 0.0882;
        // Elo(0.65) = 107.54, Elo(0.5618) = 43.16, Elo(0.7382) = 180.08.
        let e = elo_estimate(&wld(60, 30, 10));
        assert!((e.elo - 107.538).abs() < 0.01, "{e:?}");
        assert!((e.low - 43.16).abs() < 0.05, "{e:?}");
        assert!((e.high - 180.08).abs() < 0.05, "{e:?}");
        // Even record: centred on 0.
        let e = elo_estimate(&wld(10, 10, 0));
        assert_eq!(e.elo, 0.0);
        assert!((e.low + e.high).abs() < 1e-9 && e.high > 0.0);
        // All won: infinite estimate and upper end, finite lower end.
        // 12-0-0 regularised: w 12.5, l 0.5, d 0.5, s = 12.75/13.5 =
        // 0.94444, var = (12.5*0.05556^2 + 0.5*0.94444^2 + 0.5*0.44444^2)
        // / 13.5 = 0.043210, se = sqrt(var/12) = 0.060007, low =
        // Elo(1 - 1.96*0.060007) = Elo(0.882389) = +350.08.
        let e = elo_estimate(&wld(12, 0, 0));
        assert_eq!(e.elo, f64::INFINITY);
        assert_eq!(e.high, f64::INFINITY);
        assert!((e.low - 350.08).abs() < 0.01, "{e:?}");
    }

    /// A table whose scores are exactly the Bradley-Terry expectations
    /// of ratings 0, 100, 250 (1000 games a pair, fractional wins): the
    /// maximum-likelihood ratings are those ratings.
    #[test]
    fn bradley_terry_recovers_consistent_ratings() {
        let ratings = [0.0, 100.0, 250.0];
        let games = 1000.0;
        // Points stored as wins (rounded) plus a draw for the remainder,
        // so points are exact to half a game.
        let mut table = vec![vec![Wld::default(); 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                if i == j {
                    continue;
                }
                let points = score_from_elo(ratings[i] - ratings[j]) * games;
                let wins = points.floor() as u64;
                let draws = if points - points.floor() >= 0.25 {
                    1
                } else {
                    0
                };
                let draws = draws.min(1000 - wins);
                table[i][j] = wld(wins, 1000 - wins - draws, draws);
            }
        }
        let r = bradley_terry(&table, 0.0);
        assert_eq!(r[0], Some(0.0));
        let (r1, r2) = (r[1].unwrap(), r[2].unwrap());
        assert!((r1 - 100.0).abs() < 2.0, "{r:?}");
        assert!((r2 - 250.0).abs() < 2.0, "{r:?}");
    }

    #[test]
    fn bradley_terry_of_two_bots_is_their_elo() {
        let table = vec![
            vec![Wld::default(), wld(30, 60, 10)],
            vec![wld(60, 30, 10), Wld::default()],
        ];
        let r = bradley_terry(&table, 0.0);
        assert!((r[1].unwrap() - 107.538).abs() < 0.01, "{r:?}");
        // A prior keeps a clean sweep finite.
        let sweep = vec![
            vec![Wld::default(), wld(10, 0, 0)],
            vec![wld(0, 10, 0), Wld::default()],
        ];
        let r = bradley_terry(&sweep, 1.0);
        // Bot 0: 10.5 of 11 points, bot 1 at Elo(0.5/11) = -528.89.
        assert!((r[1].unwrap() + 528.89).abs() < 0.01, "{r:?}");
        // A bot with no games has no rating.
        let lonely = vec![vec![Wld::default(); 2]; 2];
        assert_eq!(bradley_terry(&lonely, 1.0)[1], None);
    }

    #[test]
    fn sprt_llr_worked_example() {
        let sprt = Sprt::parse("0,10").unwrap();
        // No draws: the projections are binomial (draw mass ~1e-5), win
        // probability s0 = 0.5 and s1 = 1/(1+10^-0.025) = 0.5143872, so
        // for 60 W, 40 L: LLR = 60 ln(s1/s0) + 40 ln((1-s1)/(1-s0))
        // = 60 ln(1.0287744) + 40 ln(0.9712256)
        // = 60 * 0.0283680 - 40 * 0.0291962 = 0.534231 (to ~1e-5).
        let llr = sprt.llr(&wld(60, 40, 0));
        assert!((llr - 0.534_231).abs() < 2e-5, "{llr}");
        // With draws: 50 W, 30 L, 20 D gives 0.668367 (fishtest's
        // LLR_logistic, the same projection done in Python).
        let llr = sprt.llr(&wld(50, 30, 20));
        assert!((llr - 0.668_367).abs() < 1e-5, "{llr}");
        // Bounds with alpha = beta = 0.05: ln(0.05/0.95) = -2.944439.
        let (lo, hi) = sprt.bounds();
        assert!((lo + 2.944_439).abs() < 1e-6 && (hi - 2.944_439).abs() < 1e-6);
        assert_eq!(sprt.decide(&wld(50, 30, 20)), SprtDecision::Continue);
        assert_eq!(sprt.decide(&wld(500, 300, 200)), SprtDecision::AcceptH1);
        assert_eq!(sprt.decide(&wld(300, 500, 200)), SprtDecision::AcceptH0);
        // A clean sweep of 4 against elo1 = 200: 4 ln(s1/0.5) with
        // s1 = 1/(1+10^-0.5) = 0.759747: 4 * 0.418377 = 1.67351 (the
        // 1e-3 pseudo-counts move it by ~1e-3); not yet decided.
        let sweep = Sprt::parse("0,200").unwrap();
        let llr = sweep.llr(&wld(4, 0, 0));
        assert!((llr - 1.6732).abs() < 2e-3, "{llr}");
        assert_eq!(sweep.decide(&wld(4, 0, 0)), SprtDecision::Continue);
        assert_eq!(sprt.decide(&wld(200, 0, 0)), SprtDecision::AcceptH1);
    }

    #[test]
    fn pentanomial_llr_and_interval_worked_example() {
        // Pairs scoring 0, 1/2, 1, 3/2, 2 points: 5, 20, 40, 25, 10.
        // Reference values from fishtest's LLR_logistic done in Python
        // (Newton on λ, the projections checked optimal by random feasible
        // perturbations): 0.671580 for (0, 10), 0.979446 for (-10, 0).
        let pairs = Pentanomial {
            counts: [5, 20, 40, 25, 10],
        };
        assert_eq!(pairs.pairs(), 100);
        let llr = Sprt::parse("0,10").unwrap().llr(&pairs);
        assert!((llr - 0.671_580).abs() < 1e-5, "{llr}");
        let llr = Sprt::parse("-10,0").unwrap().llr(&pairs);
        assert!((llr - 0.979_446).abs() < 1e-5, "{llr}");
        // An empty outcome (counts of 0 count as 1e-3): 0.206506.
        let split = Pentanomial {
            counts: [0, 10, 30, 10, 0],
        };
        let llr = Sprt::parse("-10,0").unwrap().llr(&split);
        assert!((llr - 0.206_506).abs() < 1e-5, "{llr}");
        // Mean score 0.5375 per game, variance per pair 0.0642188, so se
        // 0.0253414 over 100 pairs: Elo +26.11 [-8.46, +61.20].
        let e = elo_estimate(&pairs);
        assert!((e.elo - 26.107).abs() < 0.01, "{e:?}");
        assert!((e.low + 8.457).abs() < 0.01, "{e:?}");
        assert!((e.high - 61.196).abs() < 0.01, "{e:?}");
        // Every pair split: variance 0, regularised to a finite interval.
        let e = elo_estimate(&Pentanomial {
            counts: [0, 0, 12, 0, 0],
        });
        assert_eq!(e.elo, 0.0);
        assert!(e.low.is_finite() && e.high.is_finite() && e.low < 0.0 && e.high > 0.0);
    }

    /// When openings decide many games (splits: each side wins one game of
    /// the pair) the games vary less than independent ones would, and
    /// counting pairs sees it: 30 pairs won, 10 lost and 60 split is
    /// 120-80 in games, the same score 0.6, but the variance of a pair's
    /// mean score is 0.09 (0.18 for one game's worth) against the
    /// trinomial's 0.24 per game, so a narrower interval and a larger LLR.
    #[test]
    fn pairs_with_many_splits_have_the_smaller_variance() {
        let pairs = Pentanomial {
            counts: [10, 0, 60, 0, 30],
        };
        let games = Wld {
            wins: 120,
            losses: 80,
            draws: 0,
        };
        let (p, g) = (elo_estimate(&pairs), elo_estimate(&games));
        assert!((p.elo - g.elo).abs() < 1e-9, "{p:?} {g:?}");
        assert!(p.high - p.low < g.high - g.low, "{p:?} {g:?}");
        let sprt = Sprt::parse("0,20").unwrap();
        assert!(sprt.llr(&pairs) > sprt.llr(&games));
    }

    #[test]
    fn sprt_parse_rejects_bad_text() {
        assert!(Sprt::parse("0").is_err());
        assert!(Sprt::parse("10,0").is_err());
        assert!(Sprt::parse("0,10,0.7,0.05").is_err());
        assert!(Sprt::parse("a,b").is_err());
        let s = Sprt::parse("-5, 5, 0.1, 0.2").unwrap();
        assert_eq!((s.elo0, s.elo1, s.alpha, s.beta), (-5.0, 5.0, 0.1, 0.2));
    }
}
