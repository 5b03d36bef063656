//! SGF: parsing a collection, turning each game into a record, writing the
//! record back and parsing that again.
#![no_main]

use engine::game::sgf::{parse_collection, write_sgf};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(trees) = parse_collection(&text) else {
        return;
    };
    for tree in trees.iter().take(4) {
        let _ = tree.main_line().count();
        if let Ok(rec) = tree.record() {
            let again = write_sgf(&rec);
            if let Ok(trees) = parse_collection(&again) {
                for t in &trees {
                    let _ = t.record();
                }
            }
        }
    }
});
