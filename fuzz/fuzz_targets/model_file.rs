//! Model files (`.bin.gz`, `.bin`, `.txt`, and unknown extensions, which are
//! tried both ways): a file that is cut short or lies about its sizes must
//! give an error, never a panic or a huge allocation. A model that parses is
//! written back and read again.
#![no_main]

use std::path::Path;

use engine::nn::ModelFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks how the file is named, so one corpus serves all.
    let (name, body) = match data.split_first() {
        Some((b'T', rest)) => ("fuzz.txt", rest),
        Some((b'?', rest)) => ("fuzz.model", rest),
        _ => ("fuzz.bin.gz", data),
    };
    if let Ok(m) = ModelFile::from_file_contents(body, Path::new(name)) {
        let bytes = m.to_bytes();
        let again = ModelFile::from_bytes(&bytes, Path::new("again.bin"));
        assert!(
            again.is_ok(),
            "a model that parsed does not read back: {again:?}"
        );
        let _ = m.num_parameters();
    }
});
