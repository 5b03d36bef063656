//! KataGo's `.npz` training-data files: read and write [`TrainingRows`].
//!
//! A file is a zip of `.npy` members named without the `.npy` suffix
//! (`binaryInputNCHWPacked`, ...), deflated, as KataGo's
//! `TrainingWriteBuffers::writeToZipFile` writes them; numpy's
//! `savez_compressed` (used by KataGo's `shuffle.py`) names them with the
//! suffix. The reader takes both, stored or deflated, zip64 or not, checks
//! every member's dtype and shape against the others, and never allocates
//! more than the data a member actually decompresses to (bounded by
//! [`MAX_MEMBER_BYTES`]). The writer writes KataGo's layout exactly
//! (suffix-less names, 256-byte version 1.0 headers, deflate) and
//! [`write_npz_atomic`] writes to `NAME.tmp` first, KataGo's own temporary
//! name, which neither KataGo's `shuffle.py` nor `train.py` picks up since it
//! does not end in `.npz`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;
use zip::result::ZipError;
use zip::write::FileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::npy::{read_npy_header, write_npy_header, Dtype, NpyError, NpyHeader};
use super::{
    TrainingRows, NUM_BINARY_CHANNELS, NUM_GLOBAL_INPUTS, NUM_GLOBAL_TARGETS, NUM_METADATA_INPUTS,
    NUM_POLICY_TARGETS, NUM_Q_VALUE_TARGETS, NUM_VALUE_SPATIAL_TARGETS,
};

/// The eight members, in the order KataGo writes them; the last two are
/// optional (`qValueTargetsNCMove`: KataGo before 1.16 has none;
/// `metadataInputNC`: only human-SL data, or KataGo's `shuffle.py
/// -include-meta`, has it).
pub const MEMBER_NAMES: [&str; 8] = [
    "binaryInputNCHWPacked",
    "globalInputNC",
    "policyTargetsNCMove",
    "globalTargetsNC",
    "scoreDistrN",
    "valueTargetsNCHW",
    "qValueTargetsNCMove",
    "metadataInputNC",
];

/// Index of `qValueTargetsNCMove` in [`MEMBER_NAMES`].
const Q_VALUE_MEMBER: usize = 6;
/// Index of `metadataInputNC` in [`MEMBER_NAMES`].
const METADATA_MEMBER: usize = 7;

/// Largest member (uncompressed) the reader accepts: 8 GiB, far above a
/// 70,000-row shuffled file (about 150 MB for its largest member).
pub const MAX_MEMBER_BYTES: u64 = 8 << 30;

/// Largest data board side accepted (KataGo's `Board::MAX_LEN` is 19 by
/// default and at most 37 when compiled for bigger boards).
pub const MAX_POS_LEN: usize = 64;

/// Oldest `globalTargetsNC` width accepted: data format version 2 had 64
/// channels; like KataGo's loader, narrower rows are zero-padded to 80.
pub const MIN_GLOBAL_TARGET_CHANNELS: usize = 64;

/// An `.npz` file could not be read or written.
#[derive(Debug, Error)]
#[error("{}: {kind}", path.display())]
pub struct NpzError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: NpzErrorKind,
}

/// What went wrong with an `.npz` file.
#[derive(Debug, Error)]
pub enum NpzErrorKind {
    /// Opening, reading or writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Not a readable zip archive (truncated, no central directory, ...).
    #[error("not a valid zip archive: {0}")]
    Zip(#[from] ZipError),
    /// A member's `.npy` header or data is bad.
    #[error("member {member}: {source}")]
    Npy {
        /// Member name as stored.
        member: String,
        /// The problem.
        source: NpyError,
    },
    /// A required member is absent.
    #[error("missing member {0} (found: {1})")]
    MissingMember(&'static str, String),
    /// A member KataGo does not write (as KataGo's shuffle, refused).
    #[error("unexpected member {0}")]
    UnexpectedMember(String),
    /// A member is stored twice (with and without `.npy`).
    #[error("member {0} appears twice")]
    DuplicateMember(String),
    /// A member uses a compression other than stored or deflate.
    #[error("member {member}: compression {method} is not supported (stored or deflate only)")]
    UnsupportedCompression {
        /// Member name.
        member: String,
        /// The method.
        method: String,
    },
    /// A member is larger than [`MAX_MEMBER_BYTES`].
    #[error("member {member}: {size} bytes uncompressed, more than the limit {MAX_MEMBER_BYTES}")]
    TooLarge {
        /// Member name.
        member: String,
        /// Its declared size.
        size: u64,
    },
    /// A member's dtype is not the one KataGo uses for it.
    #[error("member {member}: dtype {found}, expected {expected}")]
    WrongDtype {
        /// Member name.
        member: &'static str,
        /// Its dtype.
        found: &'static str,
        /// KataGo's dtype.
        expected: &'static str,
    },
    /// A member's shape does not fit the others.
    #[error("member {member}: shape {found:?}, expected {expected}")]
    WrongShape {
        /// Member name.
        member: &'static str,
        /// Its shape.
        found: Vec<usize>,
        /// What it should be.
        expected: String,
    },
    /// A member's data is shorter or longer than its header announces.
    #[error("member {member}: {found} data bytes, its header announces {expected}")]
    SizeMismatch {
        /// Member name.
        member: String,
        /// Bytes present.
        found: u64,
        /// Bytes announced.
        expected: u64,
    },
    /// The rows handed to the writer are inconsistent.
    #[error("inconsistent rows: {0}")]
    InvalidRows(String),
}

impl NpzErrorKind {
    fn at(self, path: &Path) -> NpzError {
        NpzError {
            path: path.to_path_buf(),
            kind: self,
        }
    }
}

/// Reads a whole `.npz` file.
pub fn read_npz(path: &Path) -> Result<TrainingRows, NpzError> {
    let file = File::open(path).map_err(|e| NpzErrorKind::Io(e).at(path))?;
    read_npz_from(BufReader::new(file)).map_err(|k| k.at(path))
}

/// Reads an `.npz` held in memory (an object read from the run store);
/// `name` (its URL) names it in errors.
pub fn read_npz_bytes(bytes: &[u8], name: &str) -> Result<TrainingRows, NpzError> {
    read_npz_from(std::io::Cursor::new(bytes)).map_err(|k| k.at(Path::new(name)))
}

/// Reads an `.npz` from any seekable source (a file, `Cursor<Vec<u8>>`).
pub fn read_npz_from<R: Read + Seek>(reader: R) -> Result<TrainingRows, NpzErrorKind> {
    let mut archive = ZipArchive::new(reader)?;
    let index = member_index(&mut archive)?;
    let found = || {
        let mut names: Vec<&str> = index.keys().map(|s| s.as_str()).collect();
        names.sort_unstable();
        names.join(", ")
    };

    // Headers first, so shapes are checked before any data is allocated.
    let mut headers: Vec<Option<(usize, NpyHeader)>> = Vec::with_capacity(MEMBER_NAMES.len());
    for (m, name) in MEMBER_NAMES.iter().enumerate() {
        match index.get(*name) {
            Some(&i) => headers.push(Some((i, member_header(&mut archive, i)?.0))),
            None if m == Q_VALUE_MEMBER || m == METADATA_MEMBER => headers.push(None),
            None => return Err(NpzErrorKind::MissingMember(name, found())),
        }
    }
    let (num_rows, pos_len, global_target_channels) = check_shapes(&headers)?;

    let mut rows = TrainingRows::new(pos_len);
    rows.num_rows = num_rows;
    let idx = |m: usize| headers[m].as_ref().map(|(i, _)| *i);
    // Indices 0-5 are present (checked above).
    let at = |m: usize| idx(m).unwrap_or(usize::MAX);
    rows.binary_input_nchw_packed = read_member(&mut archive, at(0), Dtype::U8)?;
    rows.global_input_nc = bytes_to_f32(&read_member(&mut archive, at(1), Dtype::F32)?);
    rows.policy_targets_nc_move = bytes_to_i16(&read_member(&mut archive, at(2), Dtype::I16)?);
    let global = bytes_to_f32(&read_member(&mut archive, at(3), Dtype::F32)?);
    rows.global_targets_nc = pad_global_targets(global, global_target_channels);
    rows.score_distr_n = bytes_to_i8(read_member(&mut archive, at(4), Dtype::I8)?);
    rows.value_targets_nchw = bytes_to_i8(read_member(&mut archive, at(5), Dtype::I8)?);
    rows.q_value_targets_nc_move = match idx(Q_VALUE_MEMBER) {
        Some(i) => bytes_to_i16(&read_member(&mut archive, i, Dtype::I16)?),
        // KataGo's shuffle fills missing q-value targets with zeros.
        None => vec![0; num_rows * NUM_Q_VALUE_TARGETS * rows.policy_len()],
    };
    if let Some(i) = idx(METADATA_MEMBER) {
        rows.has_metadata = true;
        rows.metadata_input_nc = bytes_to_f32(&read_member(&mut archive, i, Dtype::F32)?);
    }
    Ok(rows)
}

/// The number of rows of an `.npz`, from the header of its
/// `binaryInputNCHWPacked` member only (as KataGo's `shuffle.py` counts).
pub fn read_npz_num_rows(path: &Path) -> Result<usize, NpzError> {
    let file = File::open(path).map_err(|e| NpzErrorKind::Io(e).at(path))?;
    read_npz_num_rows_from(BufReader::new(file)).map_err(|k| k.at(path))
}

/// [`read_npz_num_rows`] of an `.npz` held in memory; `name` names it in
/// errors.
pub fn read_npz_num_rows_bytes(bytes: &[u8], name: &str) -> Result<usize, NpzError> {
    read_npz_num_rows_from(std::io::Cursor::new(bytes)).map_err(|k| k.at(Path::new(name)))
}

/// [`read_npz_num_rows`] from any seekable source (a store object's
/// [`crate::store::ObjectReader`] fetches only the blocks it needs).
pub fn read_npz_num_rows_from<R: Read + Seek>(reader: R) -> Result<usize, NpzErrorKind> {
    let run = || -> Result<usize, NpzErrorKind> {
        let mut archive = ZipArchive::new(reader)?;
        let index = member_index(&mut archive)?;
        let i = *index.get(MEMBER_NAMES[0]).ok_or_else(|| {
            NpzErrorKind::MissingMember(
                MEMBER_NAMES[0],
                index.keys().cloned().collect::<Vec<_>>().join(", "),
            )
        })?;
        let header = member_header(&mut archive, i)?.0;
        header
            .shape
            .first()
            .copied()
            .ok_or(NpzErrorKind::WrongShape {
                member: MEMBER_NAMES[0],
                found: header.shape.clone(),
                expected: "[N, 22, packed]".into(),
            })
    };
    run()
}

/// Member name (without `.npy`) -> archive index.
fn member_index<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
) -> Result<HashMap<String, usize>, NpzErrorKind> {
    let mut index = HashMap::new();
    for i in 0..archive.len() {
        let name = archive.by_index_raw(i)?.name().to_string();
        let short = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        if !MEMBER_NAMES.contains(&short.as_str()) {
            return Err(NpzErrorKind::UnexpectedMember(name));
        }
        if index.insert(short.clone(), i).is_some() {
            return Err(NpzErrorKind::DuplicateMember(short));
        }
    }
    Ok(index)
}

/// Opens member `i` and reads its header; returns it with the member's
/// name and declared size after checking compression and size limits.
fn member_header<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    i: usize,
) -> Result<(NpyHeader, usize, String, u64), NpzErrorKind> {
    let mut f = archive.by_index(i)?;
    let name = f.name().to_string();
    match f.compression() {
        CompressionMethod::Stored | CompressionMethod::Deflated => {}
        m => {
            return Err(NpzErrorKind::UnsupportedCompression {
                member: name,
                method: format!("{m:?}"),
            })
        }
    }
    let size = f.size();
    if size > MAX_MEMBER_BYTES {
        return Err(NpzErrorKind::TooLarge { member: name, size });
    }
    let (header, used) = read_npy_header(&mut f).map_err(|source| NpzErrorKind::Npy {
        member: name.clone(),
        source,
    })?;
    Ok((header, used, name, size))
}

/// Reads member `i`'s data bytes, checking them against its header and
/// the zip's CRC.
fn read_member<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    i: usize,
    dtype: Dtype,
) -> Result<Vec<u8>, NpzErrorKind> {
    let (header, used, name, size) = member_header(archive, i)?;
    debug_assert_eq!(header.dtype, dtype);
    // A shape whose byte count overflows announces more than any member holds.
    let data_len = header.data_len().unwrap_or(usize::MAX) as u64;
    if (used as u64).checked_add(data_len) != Some(size) {
        return Err(NpzErrorKind::SizeMismatch {
            member: name,
            found: size.saturating_sub(used as u64),
            expected: data_len,
        });
    }
    let mut f = archive.by_index(i)?;
    let npy_err = |source: std::io::Error| NpzErrorKind::Npy {
        member: name.clone(),
        source: NpyError::Io(source),
    };
    std::io::copy(&mut (&mut f).take(used as u64), &mut std::io::sink()).map_err(npy_err)?;
    // Grow with the data actually decompressed, never by the header's word.
    let mut data = Vec::with_capacity((data_len as usize).min(64 << 20));
    (&mut f)
        .take(data_len)
        .read_to_end(&mut data)
        .map_err(npy_err)?;
    // Reading to the end makes the zip reader check the CRC.
    let mut extra = [0u8; 1];
    let more = f.read(&mut extra).map_err(npy_err)?;
    if data.len() as u64 != data_len || more != 0 {
        return Err(NpzErrorKind::SizeMismatch {
            member: name,
            found: data.len() as u64 + more as u64,
            expected: data_len,
        });
    }
    Ok(data)
}

/// Checks the members' dtypes and shapes against each other; returns
/// (rows, pos_len, globalTargetsNC channels).
fn check_shapes(
    headers: &[Option<(usize, NpyHeader)>],
) -> Result<(usize, usize, usize), NpzErrorKind> {
    const DTYPES: [Dtype; 8] = [
        Dtype::U8,
        Dtype::F32,
        Dtype::I16,
        Dtype::F32,
        Dtype::I8,
        Dtype::I8,
        Dtype::I16,
        Dtype::F32,
    ];
    for (m, h) in headers.iter().enumerate() {
        if let Some((_, h)) = h {
            if h.dtype != DTYPES[m] {
                return Err(NpzErrorKind::WrongDtype {
                    member: MEMBER_NAMES[m],
                    found: h.dtype.descr(),
                    expected: DTYPES[m].descr(),
                });
            }
        }
    }
    let shape = |m: usize| headers[m].as_ref().map(|(_, h)| h.shape.as_slice());
    // valueTargetsNCHW [N, 5, L, L] fixes N and the data board side L.
    let vt = shape(5).unwrap_or(&[]);
    let (n, pos_len) = match vt {
        [n, c, h, w]
            if *c == NUM_VALUE_SPATIAL_TARGETS && h == w && (1..=MAX_POS_LEN).contains(h) =>
        {
            (*n, *h)
        }
        _ => {
            return Err(NpzErrorKind::WrongShape {
                member: MEMBER_NAMES[5],
                found: vt.to_vec(),
                expected: format!("[N, {NUM_VALUE_SPATIAL_TARGETS}, L, L] with L <= {MAX_POS_LEN}"),
            })
        }
    };
    let area = pos_len * pos_len;
    let expect = |m: usize, want: &[usize]| -> Result<(), NpzErrorKind> {
        match shape(m) {
            Some(s) if s == want => Ok(()),
            Some(s) => Err(NpzErrorKind::WrongShape {
                member: MEMBER_NAMES[m],
                found: s.to_vec(),
                expected: format!("{want:?}"),
            }),
            None => Ok(()),
        }
    };
    expect(0, &[n, NUM_BINARY_CHANNELS, area.div_ceil(8)])?;
    expect(1, &[n, NUM_GLOBAL_INPUTS])?;
    expect(2, &[n, NUM_POLICY_TARGETS, area + 1])?;
    expect(4, &[n, 2 * area + 2 * super::EXTRA_SCORE_DISTR_RADIUS])?;
    expect(Q_VALUE_MEMBER, &[n, NUM_Q_VALUE_TARGETS, area + 1])?;
    expect(METADATA_MEMBER, &[n, NUM_METADATA_INPUTS])?;
    let gt = shape(3).unwrap_or(&[]);
    let channels = match gt {
        [gn, c] if *gn == n && (MIN_GLOBAL_TARGET_CHANNELS..=NUM_GLOBAL_TARGETS).contains(c) => *c,
        _ => {
            return Err(NpzErrorKind::WrongShape {
                member: MEMBER_NAMES[3],
                found: gt.to_vec(),
                expected: format!("[{n}, {MIN_GLOBAL_TARGET_CHANNELS}..={NUM_GLOBAL_TARGETS}]"),
            })
        }
    };
    Ok((n, pos_len, channels))
}

fn pad_global_targets(v: Vec<f32>, channels: usize) -> Vec<f32> {
    if channels == NUM_GLOBAL_TARGETS {
        return v;
    }
    let mut out = Vec::with_capacity(v.len() / channels * NUM_GLOBAL_TARGETS);
    for row in v.chunks_exact(channels) {
        out.extend_from_slice(row);
        out.resize(out.len() + NUM_GLOBAL_TARGETS - channels, 0.0);
    }
    out
}

fn bytes_to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn bytes_to_i16(b: &[u8]) -> Vec<i16> {
    b.chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn bytes_to_i8(b: Vec<u8>) -> Vec<i8> {
    b.into_iter().map(|x| x as i8).collect()
}

/// How [`encode_npz`] compresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NpzWriteOptions {
    /// Deflate level 0-9 (`None`: zlib's default, 6, as KataGo and numpy).
    pub level: Option<i32>,
}

/// The bytes of an `.npz` holding `rows`, ready to be written whole
/// through the run store (which makes the write atomic).
pub fn encode_npz(rows: &TrainingRows, options: &NpzWriteOptions) -> Result<Vec<u8>, NpzErrorKind> {
    Ok(write_npz_to(std::io::Cursor::new(Vec::new()), rows, options)?.into_inner())
}

/// Writes `rows` as an `.npz` into `w` (KataGo's member names, order,
/// headers; deflate) and returns the writer.
pub fn write_npz_to<W: Write + Seek>(
    w: W,
    rows: &TrainingRows,
    options: &NpzWriteOptions,
) -> Result<W, NpzErrorKind> {
    check_rows(rows)?;
    let n = rows.num_rows;
    let l = rows.pos_len;
    let area = l * l;
    let mut zip = ZipWriter::new(w);
    let mut member = |name: &str,
                      dtype: Dtype,
                      shape: &[usize],
                      data: &dyn Fn(&mut Vec<u8>, usize, usize)|
     -> Result<(), NpzErrorKind> {
        let header = write_npy_header(dtype, shape);
        let elems: usize = shape.iter().product();
        let total = header.len() as u64 + (elems * dtype.item_size()) as u64;
        let opts = FileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .compression_level(options.level)
            .large_file(total >= u32::MAX as u64);
        zip.start_file(name, opts)?;
        zip.write_all(&header)?;
        // Convert in chunks so a large member is never copied whole.
        const CHUNK: usize = 1 << 16;
        let mut buf = Vec::with_capacity(CHUNK * 4);
        let mut start = 0;
        while start < elems {
            let end = (start + CHUNK).min(elems);
            buf.clear();
            data(&mut buf, start, end);
            zip.write_all(&buf)?;
            start = end;
        }
        Ok(())
    };
    member(
        MEMBER_NAMES[0],
        Dtype::U8,
        &[n, NUM_BINARY_CHANNELS, rows.packed_len()],
        &|b, s, e| b.extend_from_slice(&rows.binary_input_nchw_packed[s..e]),
    )?;
    member(
        MEMBER_NAMES[1],
        Dtype::F32,
        &[n, NUM_GLOBAL_INPUTS],
        &|b, s, e| {
            rows.global_input_nc[s..e]
                .iter()
                .for_each(|x| b.extend_from_slice(&x.to_le_bytes()))
        },
    )?;
    member(
        MEMBER_NAMES[2],
        Dtype::I16,
        &[n, NUM_POLICY_TARGETS, area + 1],
        &|b, s, e| {
            rows.policy_targets_nc_move[s..e]
                .iter()
                .for_each(|x| b.extend_from_slice(&x.to_le_bytes()))
        },
    )?;
    member(
        MEMBER_NAMES[3],
        Dtype::F32,
        &[n, NUM_GLOBAL_TARGETS],
        &|b, s, e| {
            rows.global_targets_nc[s..e]
                .iter()
                .for_each(|x| b.extend_from_slice(&x.to_le_bytes()))
        },
    )?;
    member(
        MEMBER_NAMES[4],
        Dtype::I8,
        &[n, rows.score_distr_len()],
        &|b, s, e| b.extend(rows.score_distr_n[s..e].iter().map(|&x| x as u8)),
    )?;
    member(
        MEMBER_NAMES[5],
        Dtype::I8,
        &[n, NUM_VALUE_SPATIAL_TARGETS, l, l],
        &|b, s, e| b.extend(rows.value_targets_nchw[s..e].iter().map(|&x| x as u8)),
    )?;
    member(
        MEMBER_NAMES[Q_VALUE_MEMBER],
        Dtype::I16,
        &[n, NUM_Q_VALUE_TARGETS, area + 1],
        &|b, s, e| {
            rows.q_value_targets_nc_move[s..e]
                .iter()
                .for_each(|x| b.extend_from_slice(&x.to_le_bytes()))
        },
    )?;
    if rows.has_metadata {
        member(
            MEMBER_NAMES[METADATA_MEMBER],
            Dtype::F32,
            &[n, NUM_METADATA_INPUTS],
            &|b, s, e| {
                rows.metadata_input_nc[s..e]
                    .iter()
                    .for_each(|x| b.extend_from_slice(&x.to_le_bytes()))
            },
        )?;
    }
    Ok(zip.finish()?)
}

/// Every member holds exactly `num_rows` rows for `pos_len`.
fn check_rows(rows: &TrainingRows) -> Result<(), NpzErrorKind> {
    if rows.pos_len == 0 || rows.pos_len > MAX_POS_LEN {
        return Err(NpzErrorKind::InvalidRows(format!(
            "pos_len {} is outside 1..={MAX_POS_LEN}",
            rows.pos_len
        )));
    }
    let sizes = rows.row_sizes();
    let lens = [
        rows.binary_input_nchw_packed.len(),
        rows.global_input_nc.len(),
        rows.policy_targets_nc_move.len(),
        rows.global_targets_nc.len(),
        rows.score_distr_n.len(),
        rows.value_targets_nchw.len(),
        rows.q_value_targets_nc_move.len(),
        rows.metadata_input_nc.len(),
    ];
    for m in 0..MEMBER_NAMES.len() {
        if Some(lens[m]) != rows.num_rows.checked_mul(sizes[m]) {
            return Err(NpzErrorKind::InvalidRows(format!(
                "{} has {} elements, expected {} rows x {}",
                MEMBER_NAMES[m], lens[m], rows.num_rows, sizes[m]
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "npz_tests.rs"]
mod tests;
