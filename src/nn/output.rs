//! What one network evaluation gives the search, after post-processing.

/// One post-processed network evaluation of a position, as KataGo's
/// `NNOutput`: values are from **white's** perspective (the search converts),
/// the policy and ownership are in the position's own orientation (any
/// symmetry used to evaluate has been undone) and indexed by
/// `y * x_size + x` with `y = 0` the top row; the policy has one more entry,
/// the pass, at index `x_size * y_size`.
#[derive(Debug, Clone, PartialEq)]
pub struct NnOutput {
    /// Board width the output was made for.
    pub x_size: usize,
    /// Board height the output was made for.
    pub y_size: usize,
    /// Move probabilities (softmax over the legal moves, pass last);
    /// illegal moves are exactly -1, as KataGo reports them.
    pub policy: Vec<f32>,
    /// Probability that white wins.
    pub white_win_prob: f32,
    /// Probability that white loses.
    pub white_loss_prob: f32,
    /// Probability of no result (only possible under some ko rules).
    pub white_no_result_prob: f32,
    /// Expected final score, white minus black.
    pub white_score_mean: f32,
    /// Expected square of the final score (its second moment).
    pub white_score_mean_sq: f32,
    /// Points white is ahead by (the komi change that would make the game fair).
    pub white_lead: f32,
    /// Expected arrival time of the remaining game variance, in turns
    /// (model version >= 9; -1 when the net has no such head).
    pub var_time_left: f32,
    /// Typical error of the win/loss value against a short search
    /// (model version >= 9; -1 when absent).
    pub shortterm_winloss_error: f32,
    /// Typical error of the score against a short search (-1 when absent).
    pub shortterm_score_error: f32,
    /// Ownership per point in [-1, 1], +1 = white, when it was asked for.
    pub white_ownership: Option<Vec<f32>>,
}

impl NnOutput {
    /// Bytes an output for a board of `points` points takes at most: the
    /// struct, the policy (points and pass) and the ownership, with their
    /// heap blocks' overhead (for memory budgets).
    pub fn bytes_for(points: usize) -> u64 {
        (std::mem::size_of::<NnOutput>() + (2 * points + 1) * 4 + 3 * 16) as u64
    }

    /// Standard deviation of the final score implied by the two moments.
    pub fn white_score_stdev(&self) -> f32 {
        let var = self.white_score_mean_sq - self.white_score_mean * self.white_score_mean;
        var.max(0.0).sqrt()
    }

    /// Index of the pass entry in [`NnOutput::policy`].
    pub fn pass_index(&self) -> usize {
        self.x_size * self.y_size
    }
}
