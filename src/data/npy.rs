//! The `.npy` array header: numpy's format (versions 1.0, 2.0 and 3.0) for
//! the four dtypes KataGo's training data uses.
//!
//! A member starts with `\x93NUMPY`, a version byte pair, the header length
//! (u16 for 1.0, u32 for 2.0/3.0, little-endian) and a Python dict literal
//! such as `{'descr':'<f4','fortran_order':False,'shape':(295,19)}` padded
//! with spaces and a final newline. The data follows in C order.

use std::io::Read;

use thiserror::Error;

/// Longest header accepted. numpy itself refuses headers over 10,000 bytes
/// unless told otherwise; this bound keeps a lying length from allocating.
pub const MAX_HEADER_LEN: usize = 1 << 16;

/// Total header size KataGo's `NumpyBuffer` writes (magic, version, length,
/// dict, padding and newline): 256 bytes.
pub const KATAGO_HEADER_BYTES: usize = 256;

/// Element types of KataGo's training data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// `|u1`: bit-packed input planes.
    U8,
    /// `|i1`: score distribution and spatial value targets.
    I8,
    /// `<i2`: policy and q-value targets.
    I16,
    /// `<f4`: global inputs and targets.
    F32,
}

impl Dtype {
    /// Bytes per element.
    pub fn item_size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::I16 => 2,
            Dtype::F32 => 4,
        }
    }

    /// numpy's `descr` string, as KataGo writes it.
    pub fn descr(self) -> &'static str {
        match self {
            Dtype::U8 => "|u1",
            Dtype::I8 => "|i1",
            Dtype::I16 => "<i2",
            Dtype::F32 => "<f4",
        }
    }

    /// Parses a `descr`; byte order marks `|`, `<` and `=` are accepted for
    /// one-byte types (numpy writes `|`), `<` only for wider ones (this
    /// reader is little-endian only).
    pub fn from_descr(descr: &str) -> Option<Dtype> {
        let (order, code) = match descr.chars().next() {
            Some(c @ ('|' | '<' | '>' | '=')) => (Some(c), &descr[1..]),
            _ => (None, descr),
        };
        // `=` is native order, little-endian on every target this builds for.
        let little = matches!(order, Some('<') | Some('='));
        match code {
            "u1" => Some(Dtype::U8),
            "i1" => Some(Dtype::I8),
            "i2" if little => Some(Dtype::I16),
            "f4" if little => Some(Dtype::F32),
            _ => None,
        }
    }
}

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// Element type.
    pub dtype: Dtype,
    /// Array shape (C order).
    pub shape: Vec<usize>,
}

impl NpyHeader {
    /// Number of data bytes the header announces, or `None` on overflow.
    pub fn data_len(&self) -> Option<usize> {
        self.shape
            .iter()
            .try_fold(self.dtype.item_size(), |acc, &d| acc.checked_mul(d))
    }
}

/// What is wrong with an `.npy` header.
#[derive(Debug, Error)]
pub enum NpyError {
    /// Reading failed (including an archive's checksum error).
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// The member ended inside the header.
    #[error("truncated .npy header")]
    Truncated,
    /// Not an `.npy` array.
    #[error("not a .npy array (bad magic bytes)")]
    BadMagic,
    /// A format version this reader does not know.
    #[error(".npy format version {0}.{1} is not supported")]
    UnsupportedVersion(u8, u8),
    /// A header longer than [`MAX_HEADER_LEN`].
    #[error(".npy header of {0} bytes is longer than the limit {MAX_HEADER_LEN}")]
    HeaderTooLong(usize),
    /// The dict literal could not be parsed.
    #[error("bad .npy header {header:?}: {why}")]
    BadHeader {
        /// The header text (lossy).
        header: String,
        /// What was wrong.
        why: String,
    },
    /// A dtype other than KataGo's four.
    #[error("dtype {0:?} is not supported (|u1, |i1, <i2, <f4 only)")]
    UnsupportedDtype(String),
    /// Fortran-ordered data.
    #[error("fortran_order arrays are not supported")]
    FortranOrder,
}

/// Reads a header from the start of `r`, leaving `r` at the first data
/// byte. Returns the header and the number of bytes consumed.
pub fn read_npy_header<R: Read>(r: &mut R) -> Result<(NpyHeader, usize), NpyError> {
    let mut pre = [0u8; 8];
    read_exact_or_truncated(r, &mut pre)?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err(NpyError::BadMagic);
    }
    let (major, minor) = (pre[6], pre[7]);
    let (len, prefix) = match major {
        1 => {
            let mut b = [0u8; 2];
            read_exact_or_truncated(r, &mut b)?;
            (u16::from_le_bytes(b) as usize, 10)
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            read_exact_or_truncated(r, &mut b)?;
            (u32::from_le_bytes(b) as usize, 12)
        }
        _ => return Err(NpyError::UnsupportedVersion(major, minor)),
    };
    if len > MAX_HEADER_LEN {
        return Err(NpyError::HeaderTooLong(len));
    }
    let mut text = vec![0u8; len];
    read_exact_or_truncated(r, &mut text)?;
    let header = parse_header_dict(&text)?;
    Ok((header, prefix + len))
}

fn read_exact_or_truncated<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<(), NpyError> {
    r.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            NpyError::Truncated
        } else {
            NpyError::Io(e)
        }
    })
}

/// The header bytes (magic to newline) for an array, in KataGo's layout:
/// version 1.0, `{'descr':..,'fortran_order':False,'shape':(..)}` padded
/// with spaces to 256 bytes in all (or the next multiple of 64 if longer).
pub fn write_npy_header(dtype: Dtype, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let mut shape_text = dims.join(",");
    if shape.len() == 1 {
        shape_text.push(',');
    }
    let dict = format!(
        "{{'descr':'{}','fortran_order':False,'shape':({})}}",
        dtype.descr(),
        shape_text
    );
    // magic(6) + version(2) + len(2) + dict + at least one pad byte ('\n').
    let min_total = 10 + dict.len() + 1;
    let total = if min_total <= KATAGO_HEADER_BYTES {
        KATAGO_HEADER_BYTES
    } else {
        min_total.div_ceil(64) * 64
    };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&((total - 10) as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Parses numpy's header dict literal.
fn parse_header_dict(text: &[u8]) -> Result<NpyHeader, NpyError> {
    let s = String::from_utf8_lossy(text);
    let bad = |why: &str| NpyError::BadHeader {
        header: s.trim_end().to_string(),
        why: why.to_string(),
    };
    let mut p = DictParser {
        b: s.as_bytes(),
        i: 0,
    };
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    p.ws();
    if !p.eat(b'{') {
        return Err(bad("expected '{'"));
    }
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string().ok_or_else(|| bad("expected a quoted key"))?;
        p.ws();
        if !p.eat(b':') {
            return Err(bad("expected ':'"));
        }
        p.ws();
        match key.as_str() {
            "descr" => descr = Some(p.string().ok_or_else(|| bad("descr is not a string"))?),
            "fortran_order" => {
                fortran = Some(
                    p.boolean()
                        .ok_or_else(|| bad("fortran_order is not a bool"))?,
                )
            }
            "shape" => {
                shape = Some(
                    p.tuple()
                        .ok_or_else(|| bad("shape is not a tuple of ints"))?,
                )
            }
            _ => return Err(bad(&format!("unexpected key {key:?}"))),
        }
        p.ws();
        if p.eat(b',') {
            continue;
        }
        p.ws();
        if p.eat(b'}') {
            break;
        }
        return Err(bad("expected ',' or '}'"));
    }
    let descr = descr.ok_or_else(|| bad("no descr"))?;
    let fortran = fortran.ok_or_else(|| bad("no fortran_order"))?;
    let shape = shape.ok_or_else(|| bad("no shape"))?;
    if fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(NpyError::FortranOrder);
    }
    let dtype = Dtype::from_descr(&descr).ok_or(NpyError::UnsupportedDtype(descr))?;
    Ok(NpyHeader { dtype, shape })
}

/// A tiny reader for the subset of Python literals numpy writes.
struct DictParser<'a> {
    b: &'a [u8],
    i: usize,
}

impl DictParser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn string(&mut self) -> Option<String> {
        let q = *self.b.get(self.i)?;
        if q != b'\'' && q != b'"' {
            return None;
        }
        let start = self.i + 1;
        let end = start + self.b[start..].iter().position(|&c| c == q)?;
        self.i = end + 1;
        Some(String::from_utf8_lossy(&self.b[start..end]).into_owned())
    }

    fn boolean(&mut self) -> Option<bool> {
        for (word, v) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.b[self.i..].starts_with(word) {
                self.i += word.len();
                return Some(v);
            }
        }
        None
    }

    fn tuple(&mut self) -> Option<Vec<usize>> {
        if !self.eat(b'(') {
            return None;
        }
        let mut dims = Vec::new();
        loop {
            self.ws();
            if self.eat(b')') {
                return Some(dims);
            }
            let start = self.i;
            while self.i < self.b.len() && self.b[self.i].is_ascii_digit() {
                self.i += 1;
            }
            if self.i == start {
                return None;
            }
            let d: usize = std::str::from_utf8(&self.b[start..self.i])
                .ok()?
                .parse()
                .ok()?;
            dims.push(d);
            // Python 2 era files write longs as `295L`.
            self.eat(b'L');
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.ws();
            if self.eat(b')') {
                return Some(dims);
            }
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn katago_header_layout() {
        let h = write_npy_header(Dtype::U8, &[295, 22, 46]);
        assert_eq!(h.len(), 256);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(u16::from_le_bytes([h[8], h[9]]), 246);
        assert!(h[10..].starts_with(b"{'descr':'|u1','fortran_order':False,'shape':(295,22,46)}"));
        assert_eq!(h[255], b'\n');
        let (parsed, used) = read_npy_header(&mut &h[..]).unwrap();
        assert_eq!(used, 256);
        assert_eq!(parsed.dtype, Dtype::U8);
        assert_eq!(parsed.shape, vec![295, 22, 46]);
        assert_eq!(parsed.data_len(), Some(295 * 22 * 46));
    }

    #[test]
    fn numpy_style_headers_parse() {
        for (text, dtype, shape) in [
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 19), }",
                Dtype::F32,
                vec![3, 19],
            ),
            (
                "{'descr': '|i1', 'fortran_order': False, 'shape': (7,), }",
                Dtype::I8,
                vec![7],
            ),
            (
                "{\"descr\":\"<i2\",\"fortran_order\":False,\"shape\":(2L,3L)}",
                Dtype::I16,
                vec![2, 3],
            ),
            (
                "{'descr': '|u1', 'fortran_order': False, 'shape': ()}",
                Dtype::U8,
                vec![],
            ),
        ] {
            let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
            bytes.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
            let (h, used) = read_npy_header(&mut &bytes[..]).unwrap();
            assert_eq!((h.dtype, h.shape), (dtype, shape), "{text}");
            assert_eq!(used, bytes.len());
        }
    }

    fn header_with(text: &str) -> Vec<u8> {
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        bytes
    }

    #[test]
    fn bad_headers_are_typed_errors() {
        let e = |b: Vec<u8>| read_npy_header(&mut &b[..]).unwrap_err();
        assert!(matches!(
            e(b"\x93NUMPX\x01\x00\x00\x00".to_vec()),
            NpyError::BadMagic
        ));
        assert!(matches!(
            e(b"\x93NUMPY\x09\x00\x00\x00".to_vec()),
            NpyError::UnsupportedVersion(9, 0)
        ));
        assert!(matches!(e(b"\x93NUMPY\x01".to_vec()), NpyError::Truncated));
        // Claims 200 header bytes, has 5.
        assert!(matches!(
            e(b"\x93NUMPY\x01\x00\xc8\x00{'des".to_vec()),
            NpyError::Truncated
        ));
        assert!(matches!(
            e(b"\x93NUMPY\x02\x00\xff\xff\xff\x7f".to_vec()),
            NpyError::HeaderTooLong(_)
        ));
        assert!(matches!(
            e(header_with(
                "{'descr':'>f4','fortran_order':False,'shape':(1,2)}"
            )),
            NpyError::UnsupportedDtype(_)
        ));
        assert!(matches!(
            e(header_with(
                "{'descr':'<f8','fortran_order':False,'shape':(1,2)}"
            )),
            NpyError::UnsupportedDtype(_)
        ));
        assert!(matches!(
            e(header_with(
                "{'descr':'<f4','fortran_order':True,'shape':(3,2)}"
            )),
            NpyError::FortranOrder
        ));
        assert!(matches!(
            e(header_with(
                "{'descr':'<f4','fortran_order':False,'shape':(3,-2)}"
            )),
            NpyError::BadHeader { .. }
        ));
        assert!(matches!(
            e(header_with("{'descr':'<f4','shape':(3,2)}")),
            NpyError::BadHeader { .. }
        ));
    }

    #[test]
    fn data_len_overflow_is_none() {
        let h = NpyHeader {
            dtype: Dtype::F32,
            shape: vec![usize::MAX / 2, 3],
        };
        assert_eq!(h.data_len(), None);
    }
}
