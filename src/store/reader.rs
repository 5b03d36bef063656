//! [`ObjectReader`]: reading one object in blocks, with seeking.

use bytes::Bytes;

use super::Store;

/// A seekable reader over one object, fetching [`ObjectReader::BLOCK`]
/// bytes at a time ([`Store::reader`]). Store failures are I/O errors
/// carrying the [`StoreError`]'s text.
#[derive(Debug)]
pub struct ObjectReader {
    pub(super) store: Store,
    pub(super) key: String,
    pub(super) size: u64,
    pub(super) pos: u64,
    /// The block held: its start and bytes.
    pub(super) block: Option<(u64, Bytes)>,
}

impl ObjectReader {
    /// Bytes fetched per request.
    pub const BLOCK: u64 = 64 << 10;

    /// The object's size.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl std::io::Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let held = matches!(&self.block, Some((start, b)) if self.pos >= *start && self.pos < start + b.len() as u64);
        if !held {
            let start = self.pos - self.pos % Self::BLOCK;
            let end = (start + Self::BLOCK).min(self.size);
            let bytes = self
                .store
                .get_range(&self.key, start..end)
                .map_err(std::io::Error::other)?;
            if bytes.is_empty() {
                return Ok(0);
            }
            self.block = Some((start, bytes));
        }
        let Some((start, bytes)) = &self.block else {
            return Ok(0);
        };
        let at = (self.pos - start) as usize;
        let n = buf.len().min(bytes.len() - at);
        buf[..n].copy_from_slice(&bytes[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for ObjectReader {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(n) => Some(n),
            std::io::SeekFrom::End(d) => self.size.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let target = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        self.pos = target;
        Ok(target)
    }
}
