//! Fuzz target bodies for the files of the training side: `.npy` headers,
//! a shuffled window's `train.json`, the shuffle's `-summary-file` and the
//! trainer's checkpoints.

use std::io::Cursor;

use crate::data::npy::{read_npy_header, write_npy_header};
use crate::data::parse_summary;
use crate::store::layout::{parse_train_json, train_json_bytes};
use crate::store::StoreUrl;
#[cfg(feature = "torch")]
use crate::train::Checkpoint;

/// A `.npy` member's header on its own (magic, version, length, the dict
/// literal): what the `npz` target reaches only inside a whole zip. A
/// header that reads must announce a size or refuse (no overflow), and
/// written back in KataGo's layout must read again to the same header,
/// consuming exactly the bytes written.
///
/// # Panics
/// When a header that read does not read back equal from our own bytes.
pub fn npy(data: &[u8]) {
    let mut r = Cursor::new(data);
    let Ok((header, used)) = read_npy_header(&mut r) else {
        return;
    };
    assert_eq!(used as u64, r.position(), "header length misreported");
    let _ = header.data_len();
    let written = write_npy_header(header.dtype, &header.shape);
    // The writer's format (version 1.0) holds at most a 64 KiB header.
    if written.len() > usize::from(u16::MAX) {
        return;
    }
    let again = read_npy_header(&mut Cursor::new(&written));
    assert!(
        again
            .as_ref()
            .is_ok_and(|(h, n)| *h == header && *n == written.len()),
        "an .npy header that read does not read back from our own bytes: {again:?}"
    );
}

/// A shuffled window's `train.json` (`{"range": [start, end]}`), as
/// `engine train` and the learner read it. A range that reads must be
/// ordered, and written as the shuffle writes it must read again equal.
///
/// # Panics
/// When a range that read breaks its bounds or does not round-trip.
pub fn train_json(data: &[u8]) {
    let Ok((start, end)) = parse_train_json(data) else {
        return;
    };
    assert!(start <= end && end >= 0, "range [{start}, {end}] read");
    let again = parse_train_json(&train_json_bytes((start, end)));
    assert_eq!(again, Ok((start, end)), "train.json does not round-trip");
}

/// The shuffle's `-summary-file` (KataGo's
/// `summarize_old_selfplay_files.py` output: folder -> its files' names,
/// mtimes and rows). Its folder names are store URLs; the canonical form a
/// summary keeps must parse again to itself.
///
/// # Panics
/// When a folder URL the summary kept does not parse back to itself.
pub fn shuffle_summary(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(summary) = parse_summary(&text) else {
        return;
    };
    for dir in summary.keys() {
        let again = StoreUrl::parse(dir).map(|u| u.to_string());
        assert!(
            again.as_deref().is_ok_and(|a| a == dir),
            "summary folder {dir:?} does not parse back to itself: {again:?}"
        );
    }
}

/// Trainer checkpoints (safetensors holding the model, optimiser buffers
/// and the train state as JSON bytes): loading must give a typed error or
/// a checkpoint, never a panic. A checkpoint that loads must write back and
/// load again to the same train state and the same tensors (names, kinds,
/// shapes and bytes).
///
/// # Panics
/// When a checkpoint that loaded does not round-trip.
#[cfg(feature = "torch")]
pub fn checkpoint(data: &[u8]) {
    let Ok(ck) = Checkpoint::from_bytes(data, "fuzz.safetensors") else {
        return;
    };
    let _ = ck.group("model");
    let bytes = match ck.to_bytes() {
        Ok(b) => b,
        Err(e) => panic!("a checkpoint that loaded does not write: {e}"),
    };
    let again = match Checkpoint::from_bytes(&bytes, "again.safetensors") {
        Ok(a) => a,
        Err(e) => panic!("a checkpoint that loaded does not read back: {e}"),
    };
    assert!(
        again.state == ck.state,
        "train state differs after a round trip"
    );
    assert!(
        again.tensors.keys().eq(ck.tensors.keys()),
        "tensor names differ after a round trip"
    );
    for ((name, a), b) in again.tensors.iter().zip(ck.tensors.values()) {
        assert!(
            a.kind() == b.kind() && a.size() == b.size() && tensor_bytes(a) == tensor_bytes(b),
            "tensor {name} differs after a round trip"
        );
    }
}

/// A tensor's data bytes, `None` if they cannot be copied out.
#[cfg(feature = "torch")]
fn tensor_bytes(t: &tch::Tensor) -> Option<Vec<u8>> {
    let t = t.contiguous();
    let len = t.numel() * t.kind().elt_size_in_bytes();
    let mut out = vec![0u8; len];
    t.f_copy_data_u8(&mut out, t.numel()).ok()?;
    Some(out)
}
