//! Model files that are cut short or lie about their sizes: each gets a
//! clear error naming the file, never a panic or an allocation the size of
//! the lie (issue 11). Uses the g170 net from the shared data folder.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use engine::nn::{ModelFile, ModelFileError};

#[path = "common/old_fixtures.rs"]
mod old_fixtures;

fn g170() -> PathBuf {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let p = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    assert!(p.is_file(), "network missing: {}", p.display());
    p
}

fn unpacked() -> Vec<u8> {
    let raw = std::fs::read(g170()).expect("read g170");
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_end(&mut out)
        .expect("gunzip g170");
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).expect("gzip");
    enc.finish().expect("gzip")
}

fn format_error(data: &[u8], name: &str) -> String {
    match ModelFile::from_file_contents(data, Path::new(name)) {
        Err(e @ ModelFileError::Format { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(name), "error does not name the file: {msg}");
            msg
        }
        Err(other) => panic!("{name}: expected a format error, got {other}"),
        Ok(_) => panic!("{name}: a broken model was accepted"),
    }
}

/// Replaces the first occurrence of `from` by `to`.
fn patched(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = data
        .windows(from.len())
        .position(|w| w == from)
        .unwrap_or_else(|| panic!("{:?} not in the model", String::from_utf8_lossy(from)));
    [&data[..at], to, &data[at + from.len()..]].concat()
}

#[test]
fn the_whole_model_still_reads() {
    let data = unpacked();
    let m = ModelFile::from_file_contents(&data, Path::new("g170.bin")).expect("g170 parses");
    assert_eq!(m.version, 8);
    let gz = gzip(&data);
    let m2 = ModelFile::from_file_contents(&gz, Path::new("g170.bin.gz")).expect("gz parses");
    assert_eq!(m, m2);
}

#[test]
fn every_truncation_is_a_clear_error() {
    let data = unpacked();
    // Cuts in the header, inside weight blocks and just before the end.
    let mut cuts: Vec<usize> = (0..40).map(|k| k * data.len() / 40).collect();
    // (The file ends with a newline after the last weights, so the last cut
    // drops one byte of weights and the newline.)
    cuts.extend([1, 20, 33, 40, 80, 83, 90, data.len() - 5, data.len() - 2]);
    for cut in cuts {
        let msg = format_error(&data[..cut], "cut.bin");
        assert!(
            msg.contains("truncated") || msg.contains("ends") || msg.contains("left"),
            "cut at {cut}: {msg}"
        );
    }
    // A truncated gzip stream is a gzip error, not a panic.
    let gz = gzip(&data);
    match ModelFile::from_file_contents(&gz[..gz.len() / 2], Path::new("cut.bin.gz")) {
        Err(ModelFileError::Gzip { .. }) => {}
        other => panic!("half a gzip stream: {other:?}"),
    }
}

#[test]
fn sizes_that_lie_are_refused_before_allocating() {
    let data = unpacked();
    // conv1 claims 2^20 x 2^20 channels: 25 * 2^40 weights (100 TiB).
    let lie = patched(
        &data,
        b"conv1\n5\n5\n22\n96\n",
        b"conv1\n5\n5\n1048576\n1048576\n",
    );
    let msg = format_error(&lie, "lie.bin");
    assert!(msg.contains("declares") && msg.contains("conv1"), "{msg}");
    // Kernel and channel counts whose product overflows usize.
    let lie = patched(
        &data,
        b"conv1\n5\n5\n22\n96\n",
        b"conv1\n1048575\n1048575\n1048575\n1048575\n",
    );
    let msg = format_error(&lie, "overflow.bin");
    assert!(msg.contains("impossible"), "{msg}");
    // A trunk of a million blocks: the file ends long before.
    let lie = patched(&data, b"trunk\n6\n", b"trunk\n1048576\n");
    format_error(&lie, "blocks.bin");
    // Sizes beyond the sensible range, negative and non-numeric.
    for bad in [
        &b"conv1\n5\n5\n22\n99999999999\n"[..],
        b"conv1\n5\n5\n-22\n96\n",
        b"conv1\n5\n5\nxx\n96\n",
    ] {
        let lie = patched(&data, b"conv1\n5\n5\n22\n96\n", bad);
        format_error(&lie, "range.bin");
    }
}

#[test]
fn text_models_that_lie_are_refused_too() {
    let head = "m\n8\n22\n19\ntrunk\n6\n96\n96\n64\n32\n32\nconv1\n5\n5\n22\n96\n1\n1\n0.5 0.25\n";
    let msg = format_error(head.as_bytes(), "lie.txt");
    assert!(msg.contains("declares"), "{msg}");
    let head = "m\n8\n22\n19\ntrunk\n6\n96\n96\n64\n32\n32\nconv1\n1048575\n1048575\n1048575\n1048575\n1\n1\n0.5\n";
    let msg = format_error(head.as_bytes(), "overflow.txt");
    assert!(msg.contains("impossible"), "{msg}");
    // Non-finite text weights.
    let mut t =
        String::from("m\n8\n22\n19\ntrunk\n6\n96\n96\n64\n32\n32\nconv1\n1\n1\n1\n1\n1\n1\nnan\n");
    t.push_str(&"0 ".repeat(100));
    let msg = format_error(t.as_bytes(), "nan.txt");
    assert!(msg.contains("NaN"), "{msg}");
}

#[test]
fn garbage_and_empty_files_are_errors() {
    for (data, name) in [
        (&b""[..], "empty.bin"),
        (b"\x1f\x8b", "magic-only.bin.gz"),
        (b"\x00\x01\x02\xff", "binary.bin"),
        (b"just some words", "words.txt"),
        (b"name 8 22 19 trunk", "short.model"),
    ] {
        assert!(
            ModelFile::from_file_contents(data, Path::new(name)).is_err(),
            "{name} accepted"
        );
    }
}

/// The unpacked fixture net of model `version` (3 to 7) that KataGo's
/// answers in `tests/data/katago_old_versions` were made with.
fn old_version_net(version: i32) -> Vec<u8> {
    old_fixtures::bytes(version)
}

/// Old-version files (model versions 3 to 7) that are cut short or break
/// their version's rules: clear errors naming the file and what is wrong.
#[test]
fn malformed_old_version_files_are_clear_errors() {
    for version in 3..=7 {
        let data = old_version_net(version);
        let m = ModelFile::from_file_contents(&data, Path::new("old.bin")).expect("reads");
        assert_eq!(m.version, version);
        for k in 1..20 {
            let msg = format_error(&data[..k * data.len() / 20], "cut-old.bin");
            assert!(
                msg.contains("truncated") || msg.contains("ends") || msg.contains("left"),
                "v{version} cut {k}/20: {msg}"
            );
        }
    }
    // A version-3 file relabelled 4: its value head has 1 score channel,
    // version 4 needs 2.
    let v3 = old_version_net(3);
    let msg = format_error(
        &patched(&v3, b"synthetic-v3\n3\n", b"synthetic-v3\n4\n"),
        "relabelled.bin",
    );
    assert!(
        msg.contains("value: sv3Mul out (1) != score value outputs (2)"),
        "{msg}"
    );
    // A version-6 file (13 planes, 12 globals) relabelled 7 (22 and 16).
    let v6 = old_version_net(6);
    let msg = format_error(
        &patched(&v6, b"synthetic-v6\n6\n", b"synthetic-v6\n7\n"),
        "relabelled.bin",
    );
    assert!(
        msg.contains("expected 22 spatial and 16 global inputs for model version 7"),
        "{msg}"
    );
    // A version-7 file relabelled 11 reads activation kinds that are not
    // there: refused at the inputs already (version 11 takes 19 globals).
    let v7 = old_version_net(7);
    let msg = format_error(
        &patched(&v7, b"synthetic-v7\n7\n", b"synthetic-v7\n11\n"),
        "relabelled.bin",
    );
    assert!(msg.contains("model version 11"), "{msg}");
    // A version-5 score head claiming 4 outputs: its weights run short.
    let v5 = old_version_net(5);
    let lie = patched(
        &v5,
        b"value.linear_valuehead\n10\n2\n",
        b"value.linear_valuehead\n10\n4\n",
    );
    format_error(&lie, "score-lie.bin");
}
