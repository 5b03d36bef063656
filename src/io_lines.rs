//! Reading protocol input as raw bytes, one line at a time, with a cap on
//! the memory a line may take.
//!
//! Both protocols (`engine gtp` and `engine analysis`) read their commands
//! through [`LineReader`], because `BufRead::lines` ends the whole session on
//! the first line that is not UTF-8 and buffers a line of any length whole.
//! Here a line is split on `\n` only (a `\r` before it is dropped, one inside
//! is left to the protocol), is delivered as [`RawLine::Text`] when it is
//! UTF-8 and [`RawLine::NotUtf8`] when it is not, and a line longer than the
//! cap is read on to its end without being kept ([`RawLine::TooLong`], with
//! its first bytes so that an id can still be recovered for the error).

use std::io::{self, BufRead};

/// The longest line either protocol accepts, in bytes (without the line
/// ending). Generous for any real query — a 19x19 game of 1000 moves with
/// every field set is well under 100 kB — while a 100 MB line is refused
/// without being held in memory.
pub const MAX_LINE_BYTES: usize = 8 << 20;

/// How many bytes of a refused over-long line are kept to look for its id.
pub const TOO_LONG_PREFIX_BYTES: usize = 4096;

/// One input line, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawLine {
    /// A UTF-8 line, without its `\n` or `\r\n` ending.
    Text(String),
    /// A line that is not UTF-8: its bytes, without the line ending.
    NotUtf8(Vec<u8>),
    /// A line longer than the cap; it was read to its end and dropped.
    TooLong {
        /// Its first [`TOO_LONG_PREFIX_BYTES`] bytes (or fewer).
        prefix: Vec<u8>,
        /// Its full length in bytes, without the line ending.
        len: u64,
    },
}

impl RawLine {
    /// The error text a protocol answers a refused line with, `None` for a
    /// good line.
    pub fn refusal(&self, max_len: usize) -> Option<String> {
        match self {
            RawLine::Text(_) => None,
            RawLine::NotUtf8(bytes) => {
                let at = std::str::from_utf8(bytes)
                    .err()
                    .map_or(0, |e| e.valid_up_to());
                Some(format!(
                    "input line is not valid UTF-8 (bad byte at offset {at}); ignored"
                ))
            }
            RawLine::TooLong { len, .. } => Some(format!(
                "input line of {len} bytes is longer than the limit of {max_len} bytes; ignored"
            )),
        }
    }

    /// The bytes to look for an id in: the whole line, or the kept prefix
    /// of an over-long one.
    pub fn head_bytes(&self) -> &[u8] {
        match self {
            RawLine::Text(s) => s.as_bytes(),
            RawLine::NotUtf8(b) => b,
            RawLine::TooLong { prefix, .. } => prefix,
        }
    }
}

/// Reads lines from a byte stream with at most `max_len` bytes of any line
/// held in memory (see the module docs).
pub struct LineReader<R> {
    input: R,
    max_len: usize,
}

impl<R: BufRead> LineReader<R> {
    /// A reader with the default cap, [`MAX_LINE_BYTES`].
    pub fn new(input: R) -> LineReader<R> {
        LineReader::with_limit(input, MAX_LINE_BYTES)
    }

    /// A reader that refuses lines longer than `max_len` bytes.
    pub fn with_limit(input: R, max_len: usize) -> LineReader<R> {
        LineReader { input, max_len }
    }

    /// The cap on a line's length.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The next line, or `None` at end of input. A last line without `\n`
    /// is still a line. Read errors other than `Interrupted` are returned.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine>> {
        let mut kept: Vec<u8> = Vec::new();
        let mut len: u64 = 0;
        let mut too_long = false;
        let mut saw_any = false;
        loop {
            let chunk = match self.input.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                if !saw_any {
                    return Ok(None);
                }
                break;
            }
            saw_any = true;
            let (body, found_newline) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            len += body.len() as u64;
            if !too_long {
                if kept.len() + body.len() <= self.max_len {
                    kept.extend_from_slice(body);
                } else {
                    // Keep only a prefix from here on; the rest is skipped.
                    too_long = true;
                    let room = TOO_LONG_PREFIX_BYTES.saturating_sub(kept.len());
                    kept.truncate(TOO_LONG_PREFIX_BYTES);
                    kept.extend_from_slice(&body[..room.min(body.len())]);
                    kept.shrink_to_fit();
                }
            }
            let used = body.len() + usize::from(found_newline);
            self.input.consume(used);
            if found_newline {
                break;
            }
        }
        if too_long {
            // The length counts a `\r` ending too (it is no longer in
            // memory to check), which is harmless in an error message.
            return Ok(Some(RawLine::TooLong { prefix: kept, len }));
        }
        if kept.last() == Some(&b'\r') {
            kept.pop();
        }
        Ok(Some(match String::from_utf8(kept) {
            Ok(s) => RawLine::Text(s),
            Err(e) => RawLine::NotUtf8(e.into_bytes()),
        }))
    }
}

impl<R: BufRead> Iterator for LineReader<R> {
    type Item = io::Result<RawLine>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().transpose()
    }
}

/// Finds the value of a top-level-looking `"id": "..."` string in bytes that
/// could not be parsed as JSON (not UTF-8, or cut short), so that an error
/// about the line can still name its query. The first `"id"` key followed by
/// a colon and a plain string (no escapes) wins; `None` if there is none.
pub fn recover_json_id(bytes: &[u8]) -> Option<String> {
    let key = b"\"id\"";
    let mut from = 0;
    while from + key.len() <= bytes.len() {
        let at = from + bytes[from..].windows(key.len()).position(|w| w == key)?;
        let mut i = at + key.len();
        from = at + 1;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes.get(i) != Some(&b':') {
            continue;
        }
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes.get(i) != Some(&b'"') {
            continue;
        }
        let start = i + 1;
        let end = start
            + bytes[start..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\')?;
        if bytes[end] != b'"' {
            continue;
        }
        if let Ok(id) = std::str::from_utf8(&bytes[start..end]) {
            return Some(id.to_string());
        }
    }
    None
}

/// The analysis protocol's answer to a refused line (see
/// [`RawLine::refusal`]): `{"error": ...}`, with the query's `"id"` when one
/// can be recovered from the line, so that the client stops waiting for it.
/// `None` for a good line.
pub fn json_refusal(raw: &RawLine, max_len: usize) -> Option<serde_json::Value> {
    let message = raw.refusal(max_len)?;
    let id = match raw {
        // A line that only fails UTF-8 may still be whole JSON.
        RawLine::NotUtf8(bytes) => {
            match serde_json::from_str::<serde_json::Value>(&String::from_utf8_lossy(bytes)) {
                Ok(serde_json::Value::Object(o)) => match o.get("id") {
                    Some(serde_json::Value::String(id)) => Some(id.clone()),
                    _ => None,
                },
                _ => recover_json_id(bytes),
            }
        }
        other => recover_json_id(other.head_bytes()),
    };
    let mut m = serde_json::Map::new();
    m.insert("error".into(), serde_json::Value::String(message));
    if let Some(id) = id {
        m.insert("id".into(), serde_json::Value::String(id));
    }
    Some(serde_json::Value::Object(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor, Read};

    fn read_all(data: &[u8], cap: usize, buf: usize) -> Vec<RawLine> {
        LineReader::with_limit(
            BufReader::with_capacity(buf, Cursor::new(data.to_vec())),
            cap,
        )
        .map(|l| l.expect("reading from memory"))
        .collect()
    }

    #[test]
    fn splits_on_newline_and_drops_a_carriage_return_before_it() {
        let lines = read_all(b"a\r\nb\n\nc\rd\n\r\ne", 100, 3);
        assert_eq!(
            lines,
            vec![
                RawLine::Text("a".into()),
                RawLine::Text("b".into()),
                RawLine::Text("".into()),
                RawLine::Text("c\rd".into()),
                RawLine::Text("".into()),
                RawLine::Text("e".into()),
            ]
        );
        assert!(read_all(b"", 100, 8).is_empty());
    }

    #[test]
    fn bad_utf8_is_its_own_line_and_later_lines_survive() {
        let lines = read_all(b"ok\nbad\xff\x00x\nnul\x00\nafter", 100, 4);
        assert_eq!(lines[0], RawLine::Text("ok".into()));
        assert_eq!(lines[1], RawLine::NotUtf8(b"bad\xff\x00x".to_vec()));
        assert_eq!(lines[2], RawLine::Text("nul\0".into()));
        assert_eq!(lines[3], RawLine::Text("after".into()));
        let msg = lines[1].refusal(100).expect("refused");
        assert!(msg.contains("offset 3"), "{msg}");
    }

    #[test]
    fn over_long_lines_are_skipped_with_a_prefix_kept() {
        let mut data = vec![b'x'; 10_000];
        data.extend_from_slice(b"\nshort\n");
        for buf in [1, 7, 8192] {
            let lines = read_all(&data, 50, buf);
            assert_eq!(lines.len(), 2);
            match &lines[0] {
                RawLine::TooLong { prefix, len } => {
                    assert_eq!(*len, 10_000);
                    assert!(prefix.iter().all(|&b| b == b'x'));
                    assert!(prefix.len() <= TOO_LONG_PREFIX_BYTES);
                    assert!(prefix.len() >= 50, "{}", prefix.len());
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(lines[1], RawLine::Text("short".into()));
        }
        // Exactly at the cap is fine.
        assert_eq!(
            read_all(b"12345\n", 5, 2),
            vec![RawLine::Text("12345".into())]
        );
        assert!(matches!(
            read_all(b"123456\n", 5, 2)[0],
            RawLine::TooLong { len: 6, .. }
        ));
    }

    /// A source of `n` bytes of `x` that never holds them all, to check that
    /// the reader's memory stays bounded on a huge line.
    struct Endless {
        left: u64,
    }
    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Ok(0);
            }
            let n = (buf.len() as u64).min(self.left) as usize;
            buf[..n].fill(b'x');
            self.left -= n as u64;
            if self.left == 0 {
                buf[n - 1] = b'\n';
            }
            Ok(n)
        }
    }

    #[test]
    fn a_hundred_megabyte_line_is_refused_without_keeping_it() {
        let mut r = LineReader::with_limit(BufReader::new(Endless { left: 100 << 20 }), 1 << 20);
        match r.next_line().expect("read") {
            Some(RawLine::TooLong { prefix, len }) => {
                assert_eq!(len, (100 << 20) - 1);
                assert!(prefix.capacity() <= TOO_LONG_PREFIX_BYTES + (64 << 10));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r.next_line().expect("read"), None);
    }

    #[test]
    fn ids_are_recovered_from_broken_json() {
        assert_eq!(
            recover_json_id(b"{\"id\":\"q1\",\"x\":\"\xff\"}"),
            Some("q1".into())
        );
        assert_eq!(
            recover_json_id(b"{ \"id\" :  \"a b\" , "),
            Some("a b".into())
        );
        assert_eq!(
            recover_json_id(b"{\"ids\":\"no\",\"id\":\"yes\"}"),
            Some("yes".into())
        );
        assert_eq!(recover_json_id(b"{\"id\":5}"), None);
        assert_eq!(recover_json_id(b"{\"id\":\"unterminated"), None);
        assert_eq!(recover_json_id(b"{\"id\":\"esc\\\"aped\"}"), None);
        assert_eq!(recover_json_id(b""), None);
        assert_eq!(recover_json_id(b"\"id\""), None);
    }

    #[test]
    fn refusals_carry_the_id_when_it_can_be_read() {
        assert_eq!(json_refusal(&RawLine::Text("x".into()), 9), None);
        let v = json_refusal(
            &RawLine::NotUtf8(b"{\"x\":\"\xff\",\"id\":\"a\\\"b\"}".to_vec()),
            9,
        )
        .expect("refused");
        assert_eq!(v["id"], "a\"b", "{v}");
        assert!(
            v["error"].as_str().is_some_and(|e| e.contains("UTF-8")),
            "{v}"
        );
        let v = json_refusal(
            &RawLine::TooLong {
                prefix: b"{\"id\":\"long\",\"moves\":[".to_vec(),
                len: 1 << 30,
            },
            9,
        )
        .expect("refused");
        assert_eq!(v["id"], "long");
        assert!(
            v["error"]
                .as_str()
                .is_some_and(|e| e.contains("1073741824")),
            "{v}"
        );
        let v = json_refusal(&RawLine::NotUtf8(b"\xfe\xff".to_vec()), 9).expect("refused");
        assert!(v.get("id").is_none(), "{v}");
    }
}
