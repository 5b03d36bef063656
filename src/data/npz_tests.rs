//! Tests of the `.npz` reader and writer.

use std::io::{Cursor, Write};

use zip::write::FileOptions;
use zip::{CompressionMethod, ZipWriter};

use super::*;
use crate::data::npy::write_npy_header;

/// Rows with distinct, deterministic contents in every member.
fn sample_rows(pos_len: usize, n: usize) -> TrainingRows {
    let mut rows = TrainingRows::new(pos_len);
    for r in 0..n {
        rows.push_zeroed_row();
        let row = rows.row_mut(r);
        for (i, x) in row.binary_input_packed.iter_mut().enumerate() {
            *x = (i * 7 + r * 13) as u8;
        }
        for (i, x) in row.global_input.iter_mut().enumerate() {
            *x = i as f32 * 0.5 - r as f32;
        }
        for (i, x) in row.policy_targets.iter_mut().enumerate() {
            *x = (i as i16).wrapping_mul(97) - r as i16;
        }
        for (i, x) in row.global_targets.iter_mut().enumerate() {
            *x = (i * r) as f32 / 3.0;
        }
        for (i, x) in row.score_distr.iter_mut().enumerate() {
            *x = ((i + r) % 201) as i8;
        }
        for (i, x) in row.value_targets.iter_mut().enumerate() {
            *x = ((i + 2 * r) % 241) as i8;
        }
        for (i, x) in row.q_value_targets.iter_mut().enumerate() {
            *x = (i as i16).wrapping_mul(-331) + r as i16;
        }
    }
    rows
}

fn to_bytes(rows: &TrainingRows) -> Vec<u8> {
    write_npz_to(Cursor::new(Vec::new()), rows, &NpzWriteOptions::default())
        .unwrap()
        .into_inner()
}

fn read_bytes(b: &[u8]) -> Result<TrainingRows, NpzErrorKind> {
    read_npz_from(Cursor::new(b))
}

/// A zip built member by member: (name, header+data bytes, method, zip64).
fn custom_zip(members: &[(&str, Vec<u8>, CompressionMethod, bool)]) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes, method, large) in members {
        let opts = FileOptions::default()
            .compression_method(*method)
            .large_file(*large);
        zip.start_file(*name, opts).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// The members of `rows` as (name, npy bytes), via our writer and reader of
/// the zip crate (independent of `read_npz_from`).
fn npy_members(rows: &TrainingRows) -> Vec<(String, Vec<u8>)> {
    let bytes = to_bytes(rows);
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index(i).unwrap();
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut v).unwrap();
            (f.name().to_string(), v)
        })
        .collect()
}

#[test]
fn round_trip_in_memory_19_and_9() {
    for (pos_len, n) in [(19, 5), (9, 3), (19, 0)] {
        let rows = sample_rows(pos_len, n);
        let back = read_bytes(&to_bytes(&rows)).unwrap();
        assert_eq!(back, rows, "pos_len {pos_len}");
    }
}

/// [`sample_rows`] with distinct metadata inputs.
fn sample_rows_with_metadata(pos_len: usize, n: usize) -> TrainingRows {
    let mut rows = sample_rows(pos_len, n);
    rows.has_metadata = true;
    rows.metadata_input_nc = (0..n * NUM_METADATA_INPUTS)
        .map(|i| (i % 7) as f32 * 0.25)
        .collect();
    rows
}

#[test]
fn metadata_rows_round_trip_and_keep_their_layout() {
    for (pos_len, n) in [(19, 4), (9, 0)] {
        let rows = sample_rows_with_metadata(pos_len, n);
        let back = read_bytes(&to_bytes(&rows)).unwrap();
        assert!(back.has_metadata);
        assert_eq!(back, rows, "pos_len {pos_len}");
    }
    let rows = sample_rows_with_metadata(9, 5);
    let picked = rows.select(&[4, 1]);
    assert!(picked.has_metadata);
    assert_eq!(
        picked.metadata_input_nc[..NUM_METADATA_INPUTS],
        rows.metadata_input_nc[4 * NUM_METADATA_INPUTS..5 * NUM_METADATA_INPUTS]
    );
    let mut joined = TrainingRows::new(9);
    joined.append(&rows.slice(0, 2));
    joined.append(&rows.slice(2, 5));
    assert_eq!(joined, rows);
    let mut zeroed = TrainingRows::empty_like(&rows);
    zeroed.push_zeroed_row();
    assert_eq!(zeroed.row_mut(0).metadata_input.len(), NUM_METADATA_INPUTS);
    let mut plain = rows.clone();
    plain.drop_metadata();
    let back = read_bytes(&to_bytes(&plain)).unwrap();
    assert!(!back.has_metadata && back.metadata_input_nc.is_empty());
}

#[test]
#[should_panic(expected = "metadataInputNC mixed")]
fn rows_with_and_without_metadata_do_not_mix() {
    let mut rows = sample_rows(9, 2);
    rows.append(&sample_rows_with_metadata(9, 1));
}

#[test]
fn writes_katago_member_names_and_headers() {
    let members = npy_members(&sample_rows(19, 2));
    let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, MEMBER_NAMES[..7].to_vec());
    let members = npy_members(&sample_rows_with_metadata(19, 2));
    let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, MEMBER_NAMES.to_vec());
    assert!(
        members[7].1[10..].starts_with(b"{'descr':'<f4','fortran_order':False,'shape':(2,192)}")
    );
    let members = npy_members(&sample_rows(19, 2));
    let (_, bin) = &members[0];
    assert!(bin[10..].starts_with(b"{'descr':'|u1','fortran_order':False,'shape':(2,22,46)}"));
    assert_eq!(bin.len(), 256 + 2 * 22 * 46);
    let (_, sd) = &members[4];
    assert!(sd[10..].starts_with(b"{'descr':'|i1','fortran_order':False,'shape':(2,842)}"));
}

#[test]
fn reads_numpy_style_members_stored_with_npy_suffix_and_zip64() {
    let rows = sample_rows(7, 4);
    for (method, large) in [
        (CompressionMethod::Stored, false),
        (CompressionMethod::Deflated, true),
        (CompressionMethod::Stored, true),
    ] {
        let members: Vec<(String, Vec<u8>, CompressionMethod, bool)> = npy_members(&rows)
            .into_iter()
            .rev() // member order must not matter
            .map(|(n, b)| (format!("{n}.npy"), b, method, large))
            .collect();
        let refs: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = members
            .iter()
            .map(|(n, b, m, l)| (n.as_str(), b.clone(), *m, *l))
            .collect();
        assert_eq!(
            read_bytes(&custom_zip(&refs)).unwrap(),
            rows,
            "{method:?} {large}"
        );
    }
}

#[test]
fn old_files_without_q_values_and_with_64_global_channels_are_filled() {
    let rows = sample_rows(5, 3);
    let mut members = npy_members(&rows);
    members.pop(); // no qValueTargetsNCMove
                   // globalTargetsNC with 64 channels.
    let mut gt = write_npy_header(Dtype::F32, &[3, 64]);
    for r in 0..3 {
        for c in 0..64 {
            gt.extend_from_slice(&rows.global_targets_nc[r * 80 + c].to_le_bytes());
        }
    }
    members[3].1 = gt;
    let refs: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone(), CompressionMethod::Deflated, false))
        .collect();
    let back = read_bytes(&custom_zip(&refs)).unwrap();
    assert!(back.q_value_targets_nc_move.iter().all(|&x| x == 0));
    assert_eq!(back.q_value_targets_nc_move.len(), 3 * 3 * 26);
    for r in 0..3 {
        assert_eq!(
            back.global_targets_nc[r * 80..r * 80 + 64],
            rows.global_targets_nc[r * 80..r * 80 + 64]
        );
        assert!(back.global_targets_nc[r * 80 + 64..(r + 1) * 80]
            .iter()
            .all(|&x| x == 0.0));
    }
}

#[test]
fn every_truncation_is_an_error_never_a_panic() {
    let bytes = to_bytes(&sample_rows(9, 3));
    for cut in (0..bytes.len()).step_by(37).chain([bytes.len() - 1]) {
        assert!(
            read_bytes(&bytes[..cut]).is_err(),
            "cut at {cut} of {}",
            bytes.len()
        );
    }
}

#[test]
fn flipped_bytes_are_errors_or_exact_data() {
    let rows = sample_rows(9, 3);
    let bytes = to_bytes(&rows);
    for pos in (0..bytes.len()).step_by(11) {
        let mut b = bytes.clone();
        b[pos] ^= 0x5a;
        // A flip in a field nobody checks (a timestamp) may leave the data
        // intact; anything else must be caught (CRC, sizes, headers).
        if let Ok(back) = read_bytes(&b) {
            assert!(
                back == rows,
                "flip at {pos} gave different rows without an error"
            );
        }
    }
}

fn with_member(rows: &TrainingRows, m: usize, npy: Vec<u8>) -> Vec<u8> {
    let mut members = npy_members(rows);
    members[m].1 = npy;
    let refs: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone(), CompressionMethod::Deflated, false))
        .collect();
    custom_zip(&refs)
}

#[test]
fn inconsistent_shapes_and_dtypes_are_typed_errors() {
    let rows = sample_rows(9, 2);
    // globalInputNC with 3 rows instead of 2.
    let mut gi = write_npy_header(Dtype::F32, &[3, 19]);
    gi.resize(gi.len() + 3 * 19 * 4, 0);
    let e = read_bytes(&with_member(&rows, 1, gi)).unwrap_err();
    assert!(
        matches!(
            e,
            NpzErrorKind::WrongShape {
                member: "globalInputNC",
                ..
            }
        ),
        "{e}"
    );
    // policy targets as f32.
    let mut pt = write_npy_header(Dtype::F32, &[2, 2, 82]);
    pt.resize(pt.len() + 2 * 2 * 82 * 4, 0);
    let e = read_bytes(&with_member(&rows, 2, pt)).unwrap_err();
    assert!(
        matches!(
            e,
            NpzErrorKind::WrongDtype {
                member: "policyTargetsNCMove",
                ..
            }
        ),
        "{e}"
    );
    // Non-square value targets.
    let mut vt = write_npy_header(Dtype::I8, &[2, 5, 9, 8]);
    vt.resize(vt.len() + 2 * 5 * 72, 0);
    let e = read_bytes(&with_member(&rows, 5, vt)).unwrap_err();
    assert!(
        matches!(
            e,
            NpzErrorKind::WrongShape {
                member: "valueTargetsNCHW",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn lying_headers_do_not_allocate() {
    let rows = sample_rows(9, 2);
    // A header claiming a trillion rows, with two rows of data behind it:
    // the shape check fails first (other members have 2 rows) ...
    let mut bin = write_npy_header(Dtype::U8, &[1 << 40, 22, 11]);
    bin.resize(bin.len() + 2 * 22 * 11, 0);
    let e = read_bytes(&with_member(&rows, 0, bin)).unwrap_err();
    assert!(matches!(e, NpzErrorKind::WrongShape { .. }), "{e}");
    // ... and with every member lying consistently, the size check against
    // the zip's sizes fails before any data is read.
    let members: Vec<(String, Vec<u8>)> = npy_members(&rows)
        .into_iter()
        .map(|(n, b)| {
            let text = String::from_utf8_lossy(&b[10..256]).replace("(2,", "(2000000000000,");
            let mut nb = b[..10].to_vec();
            nb.extend_from_slice(&text.as_bytes()[..246]);
            nb.extend_from_slice(&b[256..]);
            (n, nb)
        })
        .collect();
    let refs: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone(), CompressionMethod::Deflated, false))
        .collect();
    let e = read_bytes(&custom_zip(&refs)).unwrap_err();
    assert!(matches!(e, NpzErrorKind::SizeMismatch { .. }), "{e}");
}

#[test]
fn headers_whose_byte_count_overflows_are_size_errors() {
    // Every member lying consistently about 2^62 rows: the byte count
    // overflows usize; the size check must refuse it (it overflowed its
    // own sum, a panic with overflow checks on, before the fix).
    let rows = sample_rows(5, 2);
    let members: Vec<(String, Vec<u8>)> = npy_members(&rows)
        .into_iter()
        .map(|(n, b)| {
            let text = String::from_utf8_lossy(&b[10..256]).replace("(2,", "(4611686018427387904,");
            let mut nb = b[..10].to_vec();
            nb.extend_from_slice(&text.as_bytes()[..246]);
            nb.extend_from_slice(&b[256..]);
            (n, nb)
        })
        .collect();
    let refs: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone(), CompressionMethod::Stored, false))
        .collect();
    let e = read_bytes(&custom_zip(&refs)).unwrap_err();
    assert!(matches!(e, NpzErrorKind::SizeMismatch { .. }), "{e}");
}

#[test]
fn missing_and_duplicate_members_are_errors() {
    let rows = sample_rows(5, 1);
    let members = npy_members(&rows);
    let refs: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = members
        .iter()
        .skip(1)
        .map(|(n, b)| (n.as_str(), b.clone(), CompressionMethod::Deflated, false))
        .collect();
    let e = read_bytes(&custom_zip(&refs)).unwrap_err();
    assert!(
        matches!(e, NpzErrorKind::MissingMember("binaryInputNCHWPacked", _)),
        "{e}"
    );

    let mut refs: Vec<(String, Vec<u8>, CompressionMethod, bool)> = members
        .iter()
        .map(|(n, b)| (n.clone(), b.clone(), CompressionMethod::Deflated, false))
        .collect();
    refs.push((
        format!("{}.npy", members[1].0),
        members[1].1.clone(),
        CompressionMethod::Stored,
        false,
    ));
    let refs: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = refs
        .iter()
        .map(|(n, b, m, l)| (n.as_str(), b.clone(), *m, *l))
        .collect();
    let e = read_bytes(&custom_zip(&refs)).unwrap_err();
    assert!(matches!(e, NpzErrorKind::DuplicateMember(_)), "{e}");

    assert!(matches!(
        read_bytes(b"not a zip at all"),
        Err(NpzErrorKind::Zip(_))
    ));

    // Unknown members are refused (as KataGo's shuffle.py asserts its keys);
    // metadataInputNC of another shape too.
    let mut refs: Vec<(String, Vec<u8>, CompressionMethod, bool)> = members
        .iter()
        .map(|(n, b)| (n.clone(), b.clone(), CompressionMethod::Deflated, false))
        .collect();
    let as_refs = |r: &[(String, Vec<u8>, CompressionMethod, bool)]| -> Vec<u8> {
        let v: Vec<(&str, Vec<u8>, CompressionMethod, bool)> = r
            .iter()
            .map(|(n, b, m, l)| (n.as_str(), b.clone(), *m, *l))
            .collect();
        custom_zip(&v)
    };
    assert_eq!(read_bytes(&as_refs(&refs)).unwrap(), rows);
    let mut wrong_meta = refs.clone();
    wrong_meta.push((
        "metadataInputNC".into(),
        members[1].1.clone(),
        CompressionMethod::Deflated,
        false,
    ));
    let e = read_bytes(&as_refs(&wrong_meta)).unwrap_err();
    assert!(matches!(e, NpzErrorKind::WrongShape { .. }), "{e}");
    refs.push((
        "extra".into(),
        members[1].1.clone(),
        CompressionMethod::Deflated,
        false,
    ));
    let e = read_bytes(&as_refs(&refs)).unwrap_err();
    assert!(matches!(e, NpzErrorKind::UnexpectedMember(_)), "{e}");
}

#[test]
fn writer_rejects_inconsistent_rows() {
    let mut rows = sample_rows(9, 2);
    rows.global_input_nc.pop();
    let e = write_npz_to(Cursor::new(Vec::new()), &rows, &NpzWriteOptions::default()).unwrap_err();
    assert!(matches!(e, NpzErrorKind::InvalidRows(_)), "{e}");
}

#[test]
fn encoded_bytes_read_back_and_count_rows() {
    let rows = sample_rows(19, 3);
    let bytes = encode_npz(&rows, &NpzWriteOptions::default()).unwrap();
    assert_eq!(read_npz_num_rows_bytes(&bytes, "mem.npz").unwrap(), 3);
    assert_eq!(read_npz_bytes(&bytes, "mem.npz").unwrap(), rows);
    // A cut body is an error naming the object, never rows.
    let e = read_npz_bytes(&bytes[..bytes.len() / 2], "s3://b/x.npz").unwrap_err();
    assert!(e.to_string().contains("s3://b/x.npz"), "{e}");
}

#[test]
fn katago_file_round_trips() {
    let shared = crate::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let path = shared.join("vectors/npz/1F20939B3476347D.npz");
    let rows = read_npz(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rows.num_rows, rows.pos_len), (295, 19));
    assert!(rows
        .global_targets_nc
        .chunks_exact(80)
        .all(|g| g[63] == super::super::DATA_FORMAT_VERSION));
    assert_eq!(read_npz_num_rows(&path).unwrap(), 295);
    let back = read_bytes(&to_bytes(&rows)).unwrap();
    assert_eq!(back, rows);
    // Our members are byte for byte KataGo's (same headers, same data).
    let ours = npy_members(&rows);
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
    for (name, bytes) in ours {
        let mut f = archive.by_name(&name).unwrap();
        let mut theirs = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut theirs).unwrap();
        assert!(theirs == bytes, "member {name} differs from KataGo's");
    }
}
