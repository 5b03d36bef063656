use super::*;

/// KataGo 1.17.2's own answers (`scripts/katago_metadata_vectors.sh`).
const KATAGO: &str = include_str!("../../tests/data/katago_human_nn/katago_metadata.txt");

fn player(s: &str) -> Player {
    match s {
        "B" => Player::Black,
        "W" => Player::White,
        _ => panic!("player {s}"),
    }
}

#[test]
fn profiles_rows_and_hashes_equal_katagos() {
    let (mut rows, mut hashes, mut refused, mut none) = (0, 0, 0, 0);
    for line in KATAGO.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split(' ').collect();
        match w[0] {
            "error" => {
                let err = SgfMetadata::profile(w[1]).unwrap_err();
                assert!(err.to_string().contains("rank_<R>"), "{err}");
                refused += 1;
            }
            "none" => {
                assert_eq!(SgfMetadata::profile(w[1]), Ok(None), "{line}");
                none += 1;
            }
            "row" => {
                let meta = SgfMetadata::profile(w[1]).unwrap().unwrap();
                let area: usize = w[3].parse().unwrap();
                let want: Vec<f32> = w[4..].iter().map(|x| x.parse().unwrap()).collect();
                assert_eq!(want.len(), METADATA_INPUT_NUM_CHANNELS);
                let mut got = vec![f32::NAN; METADATA_INPUT_NUM_CHANNELS];
                meta.fill_row(&mut got, player(w[2]), area);
                for (i, (g, k)) in got.iter().zip(&want).enumerate() {
                    // KataGo computes in doubles and rounds once, as we
                    // do; libm's cos/sin may differ in the last bit.
                    assert!(
                        (g - k).abs() <= 1e-6,
                        "{line}: input {i}: ours {g}, KataGo {k}"
                    );
                }
                rows += 1;
            }
            "hash" => {
                let meta = SgfMetadata::profile(w[1]).unwrap().unwrap();
                let (h0, h1) = meta.hash(player(w[2]));
                assert_eq!(format!("{h1:016X}{h0:016X}"), w[3], "{line}");
                hashes += 1;
            }
            _ => panic!("unexpected line {line}"),
        }
    }
    assert_eq!((rows, hashes, refused, none), (160, 40, 16, 3));
}

#[test]
fn days_since_epoch_is_the_proleptic_gregorian_count() {
    let d = |year, month, day| GameDate { year, month, day }.days_since_epoch();
    assert_eq!(d(1970, 1, 1), 0);
    assert_eq!(d(2020, 3, 1), 18322);
    assert_eq!(d(2000, 2, 29), 11016);
    assert_eq!(d(1800, 6, 1), -61940);
}

#[test]
fn asymmetric_profiles_give_each_side_its_own_rank() {
    let meta = SgfMetadata::profile("rank_5k_1d").unwrap().unwrap();
    assert_eq!(meta.black.rank, PlayerRank::Ranked(14));
    assert_eq!(meta.white.rank, PlayerRank::Ranked(9));
    let mut row = [f32::NAN; METADATA_INPUT_NUM_CHANNELS];
    meta.fill_row(&mut row, Player::White, 361);
    // The player to move (White, 1d) first: 9 ones, then Black's 14.
    assert_eq!(row[6..40].iter().sum::<f32>(), 9.0);
    assert_eq!(row[40..74].iter().sum::<f32>(), 14.0);
    assert_ne!(meta.hash(Player::Black), meta.hash(Player::White));
}
