//! A small FlatBuffers reader and builder, enough for `jax.export`'s schema.
//!
//! The reader treats its bytes as untrusted: every offset is checked against the buffer before
//! it is followed, every vector's length against the bytes left, and every failure is a
//! [`Malformed`] naming what was being read; nothing panics on any input. Offsets to tables,
//! vectors and strings are unsigned (they point forward), so a walk cannot loop; recursion
//! depth is bounded by the callers.
//!
//! The builder writes back to front, as FlatBuffers' own builders do: an object is finished
//! before anything that points at it, so every offset points forward. Positions are counted
//! from the end of the buffer until [`Builder::finish`].

use std::fmt;

/// A FlatBuffers structure that does not fit its bytes: an offset out of range, a length
/// past the end, a string that is not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub String);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) type Read<T> = Result<T, Malformed>;

fn bad<T>(what: impl Into<String>) -> Read<T> {
    Err(Malformed(what.into()))
}

/// The bytes of a FlatBuffer.
#[derive(Clone, Copy)]
pub(crate) struct Buf<'a>(&'a [u8]);

impl<'a> Buf<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Buf<'a> {
        Buf(bytes)
    }

    fn bytes(&self, at: usize, len: usize, what: &str) -> Read<&'a [u8]> {
        match at.checked_add(len) {
            Some(end) if end <= self.0.len() => Ok(&self.0[at..end]),
            _ => bad(format!(
                "{what}: {len} bytes at offset {at} run past the end of the {}-byte buffer",
                self.0.len()
            )),
        }
    }

    fn u8(&self, at: usize, what: &str) -> Read<u8> {
        Ok(self.bytes(at, 1, what)?[0])
    }

    fn u16(&self, at: usize, what: &str) -> Read<u16> {
        let b = self.bytes(at, 2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&self, at: usize, what: &str) -> Read<u32> {
        let b = self.bytes(at, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Follows the unsigned offset stored at `at` (it is relative to `at`).
    fn follow(&self, at: usize, what: &str) -> Read<usize> {
        let off = self.u32(at, what)? as usize;
        match at.checked_add(off) {
            Some(to) if to < self.0.len() => Ok(to),
            _ => bad(format!(
                "{what}: offset {off} at {at} points past the end of the {}-byte buffer",
                self.0.len()
            )),
        }
    }

    /// The root table.
    pub(crate) fn root(&self, what: &'static str) -> Read<Table<'a>> {
        if self.0.len() < 8 {
            return bad(format!(
                "{what}: {} bytes are too few for a FlatBuffer",
                self.0.len()
            ));
        }
        let at = self.follow(0, what)?;
        Table::at(*self, at, what)
    }
}

/// A table: a position in the buffer and its vtable, both checked.
#[derive(Clone, Copy)]
pub(crate) struct Table<'a> {
    buf: Buf<'a>,
    at: usize,
    vtable: usize,
    vtable_len: usize,
    what: &'static str,
}

impl<'a> Table<'a> {
    fn at(buf: Buf<'a>, at: usize, what: &'static str) -> Read<Table<'a>> {
        let soffset = buf.u32(at, what)? as i32;
        let vtable = i64::try_from(at).unwrap_or(i64::MAX) - i64::from(soffset);
        let vtable = usize::try_from(vtable)
            .ok()
            .filter(|v| *v < buf.0.len())
            .map_or_else(
                || {
                    bad(format!(
                        "{what}: the vtable of the table at {at} is outside the buffer"
                    ))
                },
                Ok,
            )?;
        let vtable_len = buf.u16(vtable, what)? as usize;
        let table_len = buf.u16(vtable + 2, what)? as usize;
        if vtable_len < 4 || !vtable_len.is_multiple_of(2) {
            return bad(format!("{what}: a vtable of {vtable_len} bytes"));
        }
        buf.bytes(vtable, vtable_len, what)?;
        buf.bytes(at, table_len.max(4), what)?;
        Ok(Table {
            buf,
            at,
            vtable,
            vtable_len,
            what,
        })
    }

    /// The position of field `slot` (its vtable offset: 4, 6, 8, ...), if present.
    fn field(&self, slot: u16, size: usize) -> Read<Option<usize>> {
        let slot = slot as usize;
        if slot + 2 > self.vtable_len {
            return Ok(None);
        }
        let off = self.buf.u16(self.vtable + slot, self.what)? as usize;
        if off == 0 {
            return Ok(None);
        }
        let at = self.at + off;
        self.buf.bytes(at, size, self.what)?;
        Ok(Some(at))
    }

    pub(crate) fn u8_or(&self, slot: u16, default: u8) -> Read<u8> {
        match self.field(slot, 1)? {
            Some(at) => self.buf.u8(at, self.what),
            None => Ok(default),
        }
    }

    pub(crate) fn u16_or(&self, slot: u16, default: u16) -> Read<u16> {
        match self.field(slot, 2)? {
            Some(at) => self.buf.u16(at, self.what),
            None => Ok(default),
        }
    }

    pub(crate) fn u32_or(&self, slot: u16, default: u32) -> Read<u32> {
        match self.field(slot, 4)? {
            Some(at) => self.buf.u32(at, self.what),
            None => Ok(default),
        }
    }

    pub(crate) fn table(&self, slot: u16, what: &'static str) -> Read<Option<Table<'a>>> {
        match self.field(slot, 4)? {
            Some(at) => Ok(Some(Table::at(self.buf, self.buf.follow(at, what)?, what)?)),
            None => Ok(None),
        }
    }

    pub(crate) fn string(&self, slot: u16, what: &'static str) -> Read<Option<&'a str>> {
        match self.field(slot, 4)? {
            Some(at) => Ok(Some(read_string(
                self.buf,
                self.buf.follow(at, what)?,
                what,
            )?)),
            None => Ok(None),
        }
    }

    /// A vector of scalars of `width` bytes each: its raw bytes (empty when absent).
    pub(crate) fn scalars(&self, slot: u16, width: usize, what: &'static str) -> Read<&'a [u8]> {
        match self.field(slot, 4)? {
            Some(at) => {
                let v = self.buf.follow(at, what)?;
                let n = self.buf.u32(v, what)? as usize;
                let len = n
                    .checked_mul(width)
                    .map_or_else(|| bad(format!("{what}: a vector of {n} elements")), Ok)?;
                self.buf.bytes(v + 4, len, what)
            }
            None => Ok(&[]),
        }
    }

    pub(crate) fn u16s(&self, slot: u16, what: &'static str) -> Read<Vec<u16>> {
        let raw = self.scalars(slot, 2, what)?;
        Ok(raw
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }

    pub(crate) fn u32s(&self, slot: u16, what: &'static str) -> Read<Vec<u32>> {
        let raw = self.scalars(slot, 4, what)?;
        Ok(raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// The positions of a vector of offsets (tables or strings), each checked to lie inside
    /// the buffer; empty when absent.
    fn offsets(&self, slot: u16, what: &'static str) -> Read<Vec<usize>> {
        match self.field(slot, 4)? {
            Some(at) => {
                let v = self.buf.follow(at, what)?;
                let n = self.buf.u32(v, what)? as usize;
                let len = n
                    .checked_mul(4)
                    .map_or_else(|| bad(format!("{what}: a vector of {n} elements")), Ok)?;
                self.buf.bytes(v + 4, len, what)?;
                (0..n)
                    .map(|i| self.buf.follow(v + 4 + 4 * i, what))
                    .collect()
            }
            None => Ok(Vec::new()),
        }
    }

    pub(crate) fn tables(&self, slot: u16, what: &'static str) -> Read<Vec<Table<'a>>> {
        self.offsets(slot, what)?
            .into_iter()
            .map(|at| Table::at(self.buf, at, what))
            .collect()
    }

    pub(crate) fn strings(&self, slot: u16, what: &'static str) -> Read<Vec<&'a str>> {
        self.offsets(slot, what)?
            .into_iter()
            .map(|at| read_string(self.buf, at, what))
            .collect()
    }
}

fn read_string<'a>(buf: Buf<'a>, at: usize, what: &str) -> Read<&'a str> {
    let n = buf.u32(at, what)? as usize;
    let bytes = buf.bytes(at + 4, n, what)?;
    std::str::from_utf8(bytes)
        .map_or_else(|_| bad(format!("{what}: a string that is not UTF-8")), Ok)
}

/// A FlatBuffer under construction, written back to front.
///
/// `rev` holds the buffer's bytes reversed, so that prepending is a push; a position is the
/// distance of an object's first byte from the buffer's end.
#[derive(Default)]
pub(crate) struct Builder {
    rev: Vec<u8>,
    max_align: usize,
}

/// A finished object: its distance from the buffer's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Offset(usize);

/// A field of a table being built.
pub(crate) enum Field {
    U8(u8),
    U16(u16),
    U32(u32),
    Bool(bool),
    Ref(Offset),
}

impl Builder {
    pub(crate) fn new() -> Builder {
        Builder {
            rev: Vec::new(),
            max_align: 4,
        }
    }

    fn pos(&self) -> usize {
        self.rev.len()
    }

    /// Pads so that `len` more bytes end (at the front) on an `align` boundary.
    fn prep(&mut self, align: usize, len: usize) {
        self.max_align = self.max_align.max(align);
        let pad = (align - (self.pos() + len) % align) % align;
        self.rev.extend(std::iter::repeat_n(0, pad));
    }

    fn prepend(&mut self, bytes: &[u8]) {
        self.rev.extend(bytes.iter().rev());
    }

    /// Prepends the offset from here to `target`.
    fn prepend_ref(&mut self, target: Offset) {
        self.prep(4, 4);
        let here = self.pos() + 4;
        let value = u32::try_from(here - target.0).expect("a FlatBuffer under 4 GiB");
        self.prepend(&value.to_le_bytes());
    }

    pub(crate) fn string(&mut self, s: &str) -> Offset {
        self.prep(4, s.len() + 1 + 4);
        self.prepend(&[0]);
        self.prepend(s.as_bytes());
        self.prepend(
            &u32::try_from(s.len())
                .expect("a string under 4 GiB")
                .to_le_bytes(),
        );
        Offset(self.pos())
    }

    /// A vector of scalars, given as their little-endian bytes, `width` bytes each.
    pub(crate) fn scalars(&mut self, raw: &[u8], width: usize) -> Offset {
        self.prep(width.max(4), raw.len() + 4);
        self.prep(width, raw.len());
        self.prepend(raw);
        let n = raw.len() / width;
        self.prepend(
            &u32::try_from(n)
                .expect("a vector under 4 GiB")
                .to_le_bytes(),
        );
        Offset(self.pos())
    }

    pub(crate) fn refs(&mut self, items: &[Offset]) -> Offset {
        self.prep(4, 4 * items.len() + 4);
        for &item in items.iter().rev() {
            self.prepend_ref(item);
        }
        self.prepend(
            &u32::try_from(items.len())
                .expect("a vector under 4 GiB")
                .to_le_bytes(),
        );
        Offset(self.pos())
    }

    pub(crate) fn strings(&mut self, items: &[&str]) -> Offset {
        let offs: Vec<Offset> = items.iter().map(|s| self.string(s)).collect();
        self.refs(&offs)
    }

    /// A table of these fields, each given with its vtable slot (4, 6, 8, ...).
    pub(crate) fn table(&mut self, fields: &[(u16, Field)]) -> Offset {
        let end = self.pos();
        let mut placed: Vec<(u16, usize)> = Vec::with_capacity(fields.len());
        // Widest first: each field then lies aligned without padding between them.
        let width = |f: &Field| match f {
            Field::U8(_) | Field::Bool(_) => 1,
            Field::U16(_) => 2,
            Field::U32(_) | Field::Ref(_) => 4,
        };
        let mut order: Vec<&(u16, Field)> = fields.iter().collect();
        order.sort_by_key(|(_, f)| std::cmp::Reverse(width(f)));
        for (slot, f) in order.into_iter().rev() {
            match f {
                Field::U8(v) => {
                    self.prep(1, 1);
                    self.prepend(&[*v]);
                }
                Field::Bool(v) => {
                    self.prep(1, 1);
                    self.prepend(&[u8::from(*v)]);
                }
                Field::U16(v) => {
                    self.prep(2, 2);
                    self.prepend(&v.to_le_bytes());
                }
                Field::U32(v) => {
                    self.prep(4, 4);
                    self.prepend(&v.to_le_bytes());
                }
                Field::Ref(o) => self.prepend_ref(*o),
            }
            placed.push((*slot, self.pos()));
        }
        // The table starts with the signed offset to its vtable, patched below.
        self.prep(4, 4);
        self.prepend(&[0; 4]);
        let table = self.pos();
        let max_slot = fields.iter().map(|(s, _)| *s).max().unwrap_or(2);
        let vtable_len = max_slot as usize + 2;
        let mut vtable = vec![0u16; vtable_len / 2];
        vtable[0] = u16::try_from(vtable_len).expect("a small vtable");
        vtable[1] = u16::try_from(table - end).expect("a table under 64 KiB");
        for (slot, at) in placed {
            vtable[slot as usize / 2] = u16::try_from(table - at).expect("a table under 64 KiB");
        }
        for v in vtable.iter().rev() {
            self.prepend(&v.to_le_bytes());
        }
        // The vtable lies just before the table: the table's soffset is positive.
        let soffset = i32::try_from(self.pos() - table).expect("a small vtable");
        for (i, b) in soffset.to_le_bytes().iter().enumerate() {
            // Byte `i` of the table's first word, in the reversed buffer.
            self.rev[table - 1 - i] = *b;
        }
        Offset(table)
    }

    /// The finished buffer with `root` as its root table.
    pub(crate) fn finish(mut self, root: Offset) -> Vec<u8> {
        let align = self.max_align;
        self.prep(align, 4);
        self.prepend_ref(root);
        self.rev.reverse();
        self.rev
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_round_trips() {
        let mut b = Builder::new();
        let name = b.string("hello");
        let nums = b.scalars(&[1u8, 0, 2, 0, 3, 0], 2);
        let inner = b.table(&[(4, Field::U8(7))]);
        let list = b.refs(&[inner, inner]);
        let root = b.table(&[
            (4, Field::U16(11)),
            (6, Field::Ref(name)),
            (8, Field::Ref(nums)),
            (10, Field::Ref(list)),
            (14, Field::Bool(true)),
            (16, Field::U32(123_456)),
        ]);
        let bytes = b.finish(root);
        let t = Buf::new(&bytes).root("root").unwrap();
        assert_eq!(t.u16_or(4, 0).unwrap(), 11);
        assert_eq!(t.string(6, "s").unwrap(), Some("hello"));
        assert_eq!(t.u16s(8, "v").unwrap(), vec![1, 2, 3]);
        let list = t.tables(10, "l").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].u8_or(4, 0).unwrap(), 7);
        assert_eq!(t.u8_or(12, 99).unwrap(), 99);
        assert_eq!(t.u8_or(14, 0).unwrap(), 1);
        assert_eq!(t.u32_or(16, 0).unwrap(), 123_456);
        assert_eq!(t.string(40, "absent").unwrap(), None);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let mut b = Builder::new();
        let name = b.string("abc");
        let root = b.table(&[(4, Field::Ref(name)), (6, Field::U32(5))]);
        let bytes = b.finish(root);
        for n in 0..bytes.len() {
            let cut = &bytes[..n];
            let _ = Buf::new(cut)
                .root("root")
                .and_then(|t| t.string(4, "s").map(|_| ()));
        }
    }
}
