//! Self-play's files: training rows as KataGo's `.npz` (a zip of deflated
//! `.npy` members named without the suffix, 256-byte version-1.0 headers,
//! as `numpywrite.cpp`/`TrainingWriteBuffers::writeToZipFile`), SGF lines
//! (`.sgfs`), each written to a temporary name in the same folder, synced
//! and renamed, so that a crash leaves only whole files.
//!
//! The `.npz` writer here is self-contained; when the data module's own
//! writer lands (`crate::data::npz`), this one should give way to it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

use crate::data::{
    TrainingRows, NUM_BINARY_CHANNELS, NUM_GLOBAL_INPUTS, NUM_GLOBAL_TARGETS, NUM_POLICY_TARGETS,
    NUM_Q_VALUE_TARGETS, NUM_VALUE_SPATIAL_TARGETS,
};

/// Writes `bytes` to `path` atomically: a temporary file beside it,
/// synced, then renamed over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(".{name}.tmp{}", std::process::id()));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    // Make the rename itself durable.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// One `.npy` array: KataGo's 256-byte version-1.0 header and the data.
fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let shape_text = shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut dict = format!("{{'descr':'{descr}','fortran_order':False,'shape':({shape_text})}}");
    // Magic (6) + version (2) + length (2) + dict padded with spaces and
    // ending in a newline to 256 bytes in all.
    while dict.len() < 245 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = Vec::with_capacity(256 + data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A zip with deflated members whose sizes are in the local headers.
fn zip(members: &[(&str, Vec<u8>)]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let mut crc = Crc::new();
        crc.update(data);
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::new(6));
        enc.write_all(data)?;
        let comp = enc.finish()?;
        let too_big = |n: usize| u32::try_from(n).is_err();
        if too_big(comp.len()) || too_big(data.len()) || too_big(out.len()) {
            return Err(std::io::Error::other(
                "training file over 4 GiB (lower maxRowsPerTrainFile)",
            ));
        }
        let offset = out.len() as u32;
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend_from_slice(&sig.to_le_bytes());
            if central {
                h.extend_from_slice(&20u16.to_le_bytes()); // made by
            }
            h.extend_from_slice(&20u16.to_le_bytes()); // needed
            h.extend_from_slice(&0u16.to_le_bytes()); // flags
            h.extend_from_slice(&8u16.to_le_bytes()); // deflate
            h.extend_from_slice(&0u16.to_le_bytes()); // time
            h.extend_from_slice(&0x21u16.to_le_bytes()); // date 1980-01-01
            h.extend_from_slice(&crc.sum().to_le_bytes());
            h.extend_from_slice(&(comp.len() as u32).to_le_bytes());
            h.extend_from_slice(&(data.len() as u32).to_le_bytes());
            h.extend_from_slice(&(name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // extra
            if central {
                h.extend_from_slice(&0u16.to_le_bytes()); // comment
                h.extend_from_slice(&0u16.to_le_bytes()); // disk
                h.extend_from_slice(&0u16.to_le_bytes()); // internal attrs
                h.extend_from_slice(&0u32.to_le_bytes()); // external attrs
                h.extend_from_slice(&offset.to_le_bytes());
            }
            h.extend_from_slice(name.as_bytes());
            h
        };
        out.extend_from_slice(&header(0x0403_4b50, false));
        out.extend_from_slice(&comp);
        central.extend_from_slice(&header(0x0201_4b50, true));
    }
    let cd_offset = out.len() as u32;
    let n = members.len() as u16;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    Ok(out)
}

/// The rows as KataGo's `.npz` bytes.
pub fn npz_bytes(rows: &TrainingRows) -> std::io::Result<Vec<u8>> {
    let n = rows.num_rows;
    let p = rows.pos_len;
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let i16s = |v: &[i16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let i8s = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
    let members = [
        (
            "binaryInputNCHWPacked",
            npy(
                "|u1",
                &[n, NUM_BINARY_CHANNELS, rows.packed_len()],
                &rows.binary_input_nchw_packed,
            ),
        ),
        (
            "globalInputNC",
            npy("<f4", &[n, NUM_GLOBAL_INPUTS], &f32s(&rows.global_input_nc)),
        ),
        (
            "policyTargetsNCMove",
            npy(
                "<i2",
                &[n, NUM_POLICY_TARGETS, rows.policy_len()],
                &i16s(&rows.policy_targets_nc_move),
            ),
        ),
        (
            "globalTargetsNC",
            npy(
                "<f4",
                &[n, NUM_GLOBAL_TARGETS],
                &f32s(&rows.global_targets_nc),
            ),
        ),
        (
            "scoreDistrN",
            npy(
                "|i1",
                &[n, rows.score_distr_len()],
                &i8s(&rows.score_distr_n),
            ),
        ),
        (
            "valueTargetsNCHW",
            npy(
                "|i1",
                &[n, NUM_VALUE_SPATIAL_TARGETS, p, p],
                &i8s(&rows.value_targets_nchw),
            ),
        ),
        (
            "qValueTargetsNCMove",
            npy(
                "<i2",
                &[n, NUM_Q_VALUE_TARGETS, rows.policy_len()],
                &i16s(&rows.q_value_targets_nc_move),
            ),
        ),
    ];
    zip(&members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_256_bytes() {
        let a = npy("<f4", &[3, 80], &[]);
        assert_eq!(a.len(), 256);
        assert_eq!(a[255], b'\n');
        assert!(std::str::from_utf8(&a[10..])
            .unwrap()
            .starts_with("{'descr':'<f4'"));
    }

    #[test]
    fn zip_members_inflate_back() {
        let bytes = zip(&[("a", vec![1, 2, 3, 3, 3, 3]), ("bb", vec![9; 1000])]).unwrap();
        // The local header of the first member names it and holds sizes.
        assert_eq!(&bytes[..4], &[0x50, 0x4b, 0x03, 0x04]);
        let csize = u32::from_le_bytes(bytes[18..22].try_into().unwrap()) as usize;
        let usize_ = u32::from_le_bytes(bytes[22..26].try_into().unwrap()) as usize;
        assert_eq!(usize_, 6);
        assert_eq!(&bytes[30..31], b"a");
        let mut out = Vec::new();
        use std::io::Read;
        flate2::read::DeflateDecoder::new(&bytes[31..31 + csize])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, vec![1, 2, 3, 3, 3, 3]);
    }
}
