//! Board speed: random playouts and copy + play.
//!
//! A playout starts from an empty board and plays uniformly random legal
//! moves (simple ko only, no multi-stone suicide, via `Board::is_legal` and
//! `Board::play`), never filling a simple eye of the mover, until both
//! players pass in a row (a player passes when no such move is left) or
//! `3 * points` moves are made. The candidate list of empty points is kept
//! incrementally (rebuilt after captures). One iteration = one playout;
//! criterion reports time per playout, so playouts/s = 1 / time.
//!
//! Times are the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on
//! Linux, wall time elsewhere), so other processes sharing the cores do not
//! inflate them while they preempt the benchmark.
//!
//! Run: `./setup.sh cargo bench --bench board`.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Bencher, Criterion, Throughput};
use engine::game::{Board, Color, Loc, Move, Player};

/// xorshift64*: tiny, fast and deterministic; quality is ample here.
struct Rng(u64);

impl Rng {
    #[inline]
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize * n) >> 32
    }
}

/// CPU time consumed by the calling thread so far.
#[cfg(target_os = "linux")]
fn thread_cpu_time() -> Duration {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec with the C layout of
    // 64-bit Linux, and this clock id is always supported there.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f` `iters` times and returns the thread CPU time it took.
fn cpu_iter<F: FnMut()>(b: &mut Bencher, mut f: F) {
    b.iter_custom(|iters| {
        #[cfg(target_os = "linux")]
        let start = thread_cpu_time();
        #[cfg(not(target_os = "linux"))]
        let start = std::time::Instant::now();
        for _ in 0..iters {
            f();
        }
        #[cfg(target_os = "linux")]
        let elapsed = thread_cpu_time() - start;
        #[cfg(not(target_os = "linux"))]
        let elapsed = start.elapsed();
        elapsed
    })
}

fn playout(start: &Board, rng: &mut Rng) -> usize {
    let mut board = start.clone();
    let mut empties: Vec<Loc> = board
        .locs()
        .filter(|&l| board.get(l) == Color::Empty)
        .collect();
    let max_moves = 3 * board.x_size() * board.y_size();
    let mut pla = Player::Black;
    let mut passes = 0;
    let mut moves = 0;
    while passes < 2 && moves < max_moves {
        let mut n = empties.len();
        let mut chosen = None;
        while n > 0 {
            let i = rng.below(n);
            let loc = empties[i];
            if board.is_legal(Move::Play(loc), pla, false) && !board.is_simple_eye(loc, pla) {
                chosen = Some(i);
                break;
            }
            n -= 1;
            empties.swap(i, n);
        }
        match chosen {
            None => {
                board.play(Move::Pass, pla);
                passes += 1;
            }
            Some(i) => {
                let loc = empties.swap_remove(i);
                let caps = board.num_black_captures() + board.num_white_captures();
                board.play(Move::Play(loc), pla);
                if board.num_black_captures() + board.num_white_captures() != caps {
                    empties.clear();
                    empties.extend(board.locs().filter(|&l| board.get(l) == Color::Empty));
                }
                passes = 0;
            }
        }
        moves += 1;
        pla = pla.opp();
    }
    moves
}

fn bench_playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("playout");
    for size in [9usize, 19] {
        let start = Board::new(size, size).expect("valid size");
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ size as u64);
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("{size}x{size}"), |b| {
            cpu_iter(b, || {
                black_box(playout(&start, &mut rng));
            })
        });
    }
    group.finish();
}

fn bench_copy_play(c: &mut Criterion) {
    // A mid-game 19x19 position from a seeded playout prefix.
    let mut board = Board::new(19, 19).expect("valid size");
    let mut rng = Rng(12345);
    let mut pla = Player::Black;
    for _ in 0..150 {
        let cands: Vec<Loc> = board
            .locs()
            .filter(|&l| board.is_legal(Move::Play(l), pla, false) && !board.is_simple_eye(l, pla))
            .collect();
        if cands.is_empty() {
            break;
        }
        board.play(Move::Play(cands[rng.below(cands.len())]), pla);
        pla = pla.opp();
    }
    let mv = board
        .locs()
        .find(|&l| board.is_legal(Move::Play(l), pla, false))
        .map(Move::Play)
        .unwrap_or(Move::Pass);
    // Copied into a kept board, as the search's per-playout reset does.
    let mut copy = board.clone();
    c.bench_function("copy+play 19x19 midgame", |b| {
        cpu_iter(b, || {
            copy.clone_from(black_box(&board));
            copy.play(mv, pla);
            black_box(copy.pos_hash());
        })
    });
}

criterion_group!(benches, bench_playouts, bench_copy_play);
criterion_main!(benches);
