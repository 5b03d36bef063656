//! Training data: KataGo's `.npz` reader on arbitrary bytes (zip structure,
//! `.npy` headers, dtypes and shapes that lie). A file that reads must
//! write back and read again to the same rows.
#![no_main]

use std::io::Cursor;

use engine::data::{read_npz_from, write_npz_to, NpzWriteOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(rows) = read_npz_from(Cursor::new(data)) else {
        return;
    };
    let mut out = Cursor::new(Vec::new());
    if write_npz_to(&mut out, &rows, &NpzWriteOptions::default()).is_ok() {
        let again = read_npz_from(Cursor::new(out.into_inner())).expect("our own npz reads back");
        assert_eq!(again, rows);
    }
});
