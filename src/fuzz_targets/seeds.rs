//! Seed corpora for the fuzz targets, built from the repository's configs
//! and the reference data in `../shared` (KataGo's vectors, configs and test
//! nets). `scripts/fuzz.sh` writes them out (through the `seeds` binary of
//! `fuzz/`) before each run; `tests/fuzz_regressions.rs` runs them through
//! the target bodies.

use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::{file_name, files_with};

/// One seed input for one target.
#[derive(Debug, Clone)]
pub struct Seed {
    /// The target it is for (a name in [`super::TARGETS`]).
    pub target: &'static str,
    /// A file name for it, unique within the target.
    pub name: String,
    /// The input.
    pub data: Vec<u8>,
}

/// GTP sessions: every command family, odd spacing, ids, CR/LF, comments.
const GTP_SESSIONS: &[&str] = &[
    "1 protocol_version\n2 name\n3 version\n4 list_commands\n5 known_command play\n",
    "boardsize 9\nclear_board\nkomi 7.5\nplay b E5\nplay w C3\ngenmove b\nshowboard\nundo\nfinal_score\nfinal_status_list dead\n",
    "10 boardsize 19\n11 fixed_handicap 4\n12 genmove w\n13 kata-get-rules\n14 kata-set-rule ko POSITIONAL\n15 kata-set-rules japanese\n16 kgs-rules chinese\n",
    "rectangular_boardsize 7 11\nset_position b A1 w B2 b C3\nplace_free_handicap 2\nset_free_handicap D4 Q16\n",
    "time_settings 300 30 5\nkgs-time_settings byoyomi 60 10 3\ntime_left b 100 0\nkata-list_time_settings\nkata-time_settings fischer 60 5\n",
    "kata-get-params\nkata-get-param maxVisits\nkata-set-param maxVisits 10\nkata-set-params {\"playoutDoublingAdvantage\":0.5}\nkata-list-params\n",
    "kata-analyze 10 ownership true\n\nlz-analyze B 20 avoid b D4,Q16 1\n\nanalyze interval 5 minmoves 3\nstop\n",
    "1 play b D4\r\n2 play w Q16\r\n3 kata-search b\r\n4 genmove_debug w\r\n5 printsgf\r\n6 kata-raw-nn 0\r\n7 clear_cache\r\n8 cputime\r\n9 gomill-cpu_time\r\n",
    "# comment\n\t 5 name\t# trailing\n99999999999999999999999 name\n7\n",
];

/// Action queries and one query with every field, beside those taken from
/// KataGo's vectors.
const ANALYSIS_EXTRA: &[&str] = &[
    r#"{"id":"v","action":"query_version"}"#,
    r#"{"id":"m","action":"query_models"}"#,
    r#"{"id":"c","action":"clear_cache"}"#,
    r#"{"id":"t","action":"terminate","terminateId":"q","turnNumbers":[0,1]}"#,
    r#"{"id":"ta","action":"terminate_all"}"#,
    r#"{"id":"q","moves":[["B","D4"],["W","pass"]],"initialStones":[["B","C3"]],"initialPlayer":"W","rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9,"analyzeTurns":[0,1,2],"maxVisits":1,"includeOwnership":true,"includePolicy":true,"includeMovesOwnership":true,"includePVVisits":true,"avoidMoves":[{"player":"B","moves":["E5"],"untilDepth":1}],"overrideSettings":{"wideRootNoise":0.0,"reportAnalysisWinratesAs":"BLACK"},"priority":3,"reportDuringSearchEvery":0.5,"whiteHandicapBonus":"N"}"#,
];

/// Every seed for every target. `shared` is the reference-data folder
/// (`crate::shared_data_dir()`), `repo` the checkout (for `configs/`).
/// Folders that are absent give no seeds; a file that is there but cannot be
/// read is an error.
pub fn seed_corpus(shared: &Path, repo: &Path) -> io::Result<Vec<Seed>> {
    let mut seeds = Vec::new();
    let mut add = |target: &'static str, name: String, data: Vec<u8>| {
        seeds.push(Seed { target, name, data });
    };
    let vectors = shared.join("vectors");

    for (i, s) in GTP_SESSIONS.iter().enumerate() {
        add("gtp_lines", format!("session-{i}"), s.as_bytes().to_vec());
    }

    // Every 8th query of KataGo's reference vectors, then the extras.
    for name in [
        "nn.jsonl",
        "search200.jsonl",
        "search200_deterministic.jsonl",
    ] {
        let path = vectors.join("nn").join(name);
        if !path.is_file() {
            continue;
        }
        let text = fs::read_to_string(&path)?;
        for (k, line) in text.lines().enumerate().step_by(8) {
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
            if let Some(q) = v.get("query") {
                let data = format!("{q}\n").into_bytes();
                add("analysis_queries", format!("{name}-{k}"), data);
            }
        }
    }
    for (i, q) in ANALYSIS_EXTRA.iter().enumerate() {
        add(
            "analysis_queries",
            format!("extra-{i}"),
            format!("{q}\n").into_bytes(),
        );
    }

    for dir in [vectors.join("games"), vectors.join("npz").join("sgfs")] {
        for path in files_with(&dir, &["sgf"])? {
            add("sgf", file_name(&path), fs::read(&path)?);
        }
    }
    let variations =
        r"(;GM[1]FF[4]SZ[19]KM[6.5]RU[Japanese]HA[2]AB[dd][pp];W[qd](;B[dp]C[a\]b])(;B[pq]))";
    add("sgf", "variations".into(), variations.as_bytes().to_vec());

    for dir in [
        repo.join("configs"),
        vectors.join("configs"),
        vectors.join("npz"),
        vectors.join("npz-more"),
    ] {
        for path in files_with(&dir, &["toml", "cfg"])? {
            add("config", file_name(&path), fs::read(&path)?);
        }
    }
    let overrides = "maxVisits=5,rules=japanese,numSearchThreads=2";
    add("config", "overrides".into(), overrides.as_bytes().to_vec());

    // The header and first layers of each test net, unpacked, packed and
    // cut inside a weight block; the same as text (`T` picks `.txt`).
    for path in files_with(&shared.join("models"), &["gz"])? {
        let base = file_name(&path).trim_end_matches(".bin.gz").to_string();
        let mut head = Vec::new();
        GzDecoder::new(fs::File::open(&path)?)
            .take(60_000)
            .read_to_end(&mut head)?;
        let mut packed = GzEncoder::new(Vec::new(), Compression::fast());
        packed.write_all(&head)?;
        add(
            "model_file",
            format!("{base}-head.bin.gz"),
            packed.finish()?,
        );
        add(
            "model_file",
            format!("{base}-short.bin"),
            head[..head.len().min(3000)].to_vec(),
        );
        add("model_file", format!("{base}-head.bin"), head);
    }

    // KataGo's own npz files: the small one whole, the others' heads.
    for dir in [vectors.join("npz"), vectors.join("npz-more")] {
        for path in files_with(&dir, &["npz"])? {
            let data = fs::read(&path)?;
            let data = if data.len() <= 100_000 {
                data
            } else {
                data[..100_000].to_vec()
            };
            add("npz", file_name(&path), data);
        }
    }
    add("npz", "tiny.npz".into(), tiny_npz()?);
    seeds.extend(super::seeds_more::seeds(shared, repo)?);
    Ok(seeds)
}

/// A small whole `.npz` in KataGo's layout: one row at board size 5, stored
/// (not deflated) so that the fuzzer's mutations reach the `.npy` headers.
fn tiny_npz() -> io::Result<Vec<u8>> {
    const P: usize = 5;
    const A: usize = P * P;
    let members: [(&str, &str, Vec<usize>, usize); 7] = [
        (
            "binaryInputNCHWPacked",
            "|u1",
            vec![1, 22, A.div_ceil(8)],
            1,
        ),
        ("globalInputNC", "<f4", vec![1, 19], 4),
        ("policyTargetsNCMove", "<i2", vec![1, 2, A + 1], 2),
        ("globalTargetsNC", "<f4", vec![1, 80], 4),
        ("scoreDistrN", "|i1", vec![1, 2 * A + 120], 1),
        ("valueTargetsNCHW", "|i1", vec![1, 5, P, P], 1),
        ("qValueTargetsNCMove", "<i2", vec![1, 3, A + 1], 2),
    ];
    let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let opts =
        zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, descr, shape, itemsize) in members {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let header = format!(
            "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({}), }}",
            dims.join(", ")
        );
        let header = format!("{header:<118}\n");
        let count: usize = shape.iter().product();
        zip.start_file(name, opts).map_err(io::Error::other)?;
        zip.write_all(b"\x93NUMPY\x01\x00")?;
        let len = u16::try_from(header.len()).map_err(io::Error::other)?;
        zip.write_all(&len.to_le_bytes())?;
        zip.write_all(header.as_bytes())?;
        zip.write_all(&vec![0u8; count * itemsize])?;
    }
    Ok(zip.finish().map_err(io::Error::other)?.into_inner())
}
