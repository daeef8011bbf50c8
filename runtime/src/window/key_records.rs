//! One key's state in one allocation: the key, then the key's records in
//! the order they entered, encoded as bytes ([`KeyRecords`]).
//!
//! A million keys of one record each is the case the layout is for: one
//! heap block per key, no per-record allocation, strings inline. The bytes
//! (integers little-endian):
//!
//! ```text
//! key    := varint(0) i64                  an int key
//!         | varint(len + 1) bytes          a string key
//! record := varint(len of fields) varint(number) time:i64 fields
//! field  := i64                            int, timestamp, duration
//!         | f64 bits                       float
//!         | 16 bytes                       decimal (rust_decimal's serialize)
//!         | u8                             bool
//!         | varint(len) bytes              string
//! ```
//!
//! A record's number counts the records its key entered before it, so
//! that one record can be withdrawn (`WindowStore::withdraw`) whatever was
//! pruned or withdrawn around it. A record has one field per aggregate
//! that takes an argument, in the window's order (`count()` has none). Equal values have equal field
//! bytes, which is what `distinct` compares.
//!
//! Decoding cannot fail on bytes this module wrote; were the bytes ever
//! short, reading stops (`None`) rather than panics.

use std::ops::Range;

use rust_decimal::Decimal;

use super::shape::{Arg, ArgKind, Key};

/// A key as the store holds it: a string key as its bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum KeyView<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl<'a> From<Key<'a>> for KeyView<'a> {
    fn from(key: Key<'a>) -> KeyView<'a> {
        match key {
            Key::Int(int) => KeyView::Int(int),
            Key::Str(text) => KeyView::Str(text.as_bytes()),
        }
    }
}

/// One key and its records, in one byte buffer.
#[derive(Default, Debug)]
pub(super) struct KeyRecords {
    bytes: Vec<u8>,
    /// The records held.
    count: usize,
}

/// One record as read back: its number, its time and its fields.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record<'a> {
    pub number: u64,
    pub time: i64,
    pub fields: Fields<'a>,
}

/// A cursor over one record's fields.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fields<'a> {
    /// The whole buffer, so a field's place is an offset into it.
    bytes: &'a [u8],
    at: usize,
    end: usize,
}

/// One field as read back: its value and where its bytes lie in the
/// key's buffer.
#[derive(Clone, Debug)]
pub(super) struct Field<'a> {
    pub value: Stored<'a>,
    pub place: Range<usize>,
}

/// A field's value.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Stored<'a> {
    Int(i64),
    Decimal(Decimal),
    Float(f64),
    Bool(bool),
    Str(&'a [u8]),
}

/// The bytes a record numbered `number` takes: its header and its fields.
pub(super) fn record_len(number: u64, args: &[Arg<'_>]) -> usize {
    let fields = fields_len(args);
    (varint_len(fields as u64) + varint_len(number) + 8).saturating_add(fields)
}

/// The bytes a key takes at the start of its buffer.
pub(super) fn key_len(key: KeyView<'_>) -> usize {
    match key {
        KeyView::Int(_) => 9,
        KeyView::Str(text) => varint_len(text.len() as u64 + 1).saturating_add(text.len()),
    }
}

fn fields_len(args: &[Arg<'_>]) -> usize {
    args.iter().map(field_len).fold(0, usize::saturating_add)
}

fn field_len(arg: &Arg<'_>) -> usize {
    match arg {
        Arg::None => 0,
        Arg::Bool(_) => 1,
        Arg::Int(_) | Arg::Float(_) => 8,
        Arg::Decimal(_) => 16,
        Arg::Str(text) => varint_len(text.len() as u64).saturating_add(text.len()),
    }
}

impl KeyRecords {
    /// `key` with no records yet, with room for `reserve` more bytes (the
    /// first record's, so a key of one record is one exact allocation).
    pub fn new(key: KeyView<'_>, reserve: usize) -> KeyRecords {
        KeyRecords::reuse(KeyRecords::default(), key, reserve)
    }

    /// [`KeyRecords::new`] in the buffer of `spare` (a dropped key's), so
    /// that a key coming as another goes allocates nothing.
    pub fn reuse(spare: KeyRecords, key: KeyView<'_>, reserve: usize) -> KeyRecords {
        let mut bytes = spare.bytes;
        bytes.clear();
        bytes.reserve_exact(key_len(key).saturating_add(reserve));
        match key {
            KeyView::Int(int) => {
                write_varint(&mut bytes, 0);
                bytes.extend_from_slice(&int.to_le_bytes());
            }
            KeyView::Str(text) => {
                write_varint(&mut bytes, text.len() as u64 + 1);
                bytes.extend_from_slice(text);
            }
        }
        KeyRecords { bytes, count: 0 }
    }

    /// Asks the processor to fetch the start of the buffer (the key, the
    /// oldest records) ahead of its use.
    pub fn prefetch(&self) {
        if let Some(first) = self.bytes.first() {
            super::index::prefetch(first);
        }
    }

    /// Whether the buffer holds a key (reads only the buffer's length).
    pub fn is_held(&self) -> bool {
        !self.bytes.is_empty()
    }

    /// The key (`None` only for an empty buffer, which holds no key).
    pub fn key(&self) -> Option<KeyView<'_>> {
        decode_key(&self.bytes).map(|(key, _)| key)
    }

    /// The heap bytes this key's buffer takes, the allocator's rounding
    /// included ([`allocation_bytes`]).
    pub fn heap_bytes(&self) -> usize {
        allocation_bytes(self.bytes.capacity())
    }

    /// The bytes the key and its records take, unrounded.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The records held.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Appends record `number`: its time and one field per argument
    /// ([`Arg::None`] writes nothing).
    pub fn push(&mut self, number: u64, time: i64, args: &[Arg<'_>]) {
        let fields = fields_len(args);
        self.bytes.reserve(record_len(number, args));
        write_varint(&mut self.bytes, fields as u64);
        write_varint(&mut self.bytes, number);
        self.bytes.extend_from_slice(&time.to_le_bytes());
        for arg in args {
            write_field(&mut self.bytes, arg);
        }
        self.count += 1;
    }

    /// The records in the order they entered.
    pub fn iter(&self) -> Records<'_> {
        Records { bytes: &self.bytes, at: self.first_record() }
    }

    /// Removes the records whose time is `stale`, keeping the others in
    /// their order.
    pub fn prune(&mut self, stale: impl Fn(i64) -> bool) {
        self.retain(|header| !stale(header.time));
    }

    /// The records and bytes (the key's included) that would stay if the
    /// records whose time is `stale` were pruned.
    pub fn live(&self, stale: impl Fn(i64) -> bool) -> (usize, usize) {
        let first = self.first_record();
        let (mut count, mut len, mut at) = (0, first, first);
        while let Some(header) = record_header(&self.bytes, at) {
            if !stale(header.time) {
                count += 1;
                len += header.end - at;
            }
            at = header.end;
        }
        (count, len)
    }

    /// Removes record `number`; whether it was held.
    pub fn remove(&mut self, number: u64) -> bool {
        let before = self.count;
        self.retain(|header| header.number != number);
        self.count < before
    }

    /// Keeps the records `keep` says to, in their order; gives back memory
    /// when less than a quarter of a large buffer is in use, so a key past
    /// a burst does not keep the burst's block.
    fn retain(&mut self, keep: impl Fn(&Header) -> bool) {
        let mut read = self.first_record();
        let mut write = read;
        let mut count = 0;
        while let Some(header) = record_header(&self.bytes, read) {
            if keep(&header) {
                self.bytes.copy_within(read..header.end, write);
                write += header.end - read;
                count += 1;
            }
            read = header.end;
        }
        self.bytes.truncate(write);
        self.count = count;
        if self.bytes.capacity() >= SHRINK_FROM && self.bytes.capacity() / 4 > self.bytes.len() {
            self.bytes.shrink_to(self.bytes.len() * 2);
        }
    }

    fn first_record(&self) -> usize {
        decode_key(&self.bytes).map_or(self.bytes.len(), |(_, at)| at)
    }

    /// The bytes of the buffer, where [`Field::place`] points.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// A buffer smaller than this keeps its capacity when pruned.
const SHRINK_FROM: usize = 4096;

/// The records of one key, in the order they entered.
#[derive(Debug)]
pub(super) struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        let Header { number, time, fields, end } = record_header(self.bytes, self.at)?;
        self.at = end;
        Some(Record { number, time, fields: Fields { bytes: self.bytes, at: fields, end } })
    }
}

impl<'a> Fields<'a> {
    /// The next field, read as an argument of `kind` (`None` for
    /// [`ArgKind::None`], which has no field, and past the record's end).
    pub fn next(&mut self, kind: ArgKind) -> Option<Field<'a>> {
        let start = self.at;
        let value = match kind {
            ArgKind::None => return None,
            ArgKind::Int | ArgKind::Timestamp | ArgKind::Duration => {
                Stored::Int(i64::from_le_bytes(read_array(self.bytes, &mut self.at)?))
            }
            ArgKind::Float => Stored::Float(f64::from_le_bytes(read_array(self.bytes, &mut self.at)?)),
            ArgKind::Decimal => Stored::Decimal(Decimal::deserialize(read_array(self.bytes, &mut self.at)?)),
            ArgKind::Bool => Stored::Bool(read_array::<1>(self.bytes, &mut self.at)? != [0]),
            ArgKind::Str => {
                let len = usize::try_from(read_varint(self.bytes, &mut self.at)?).ok()?;
                Stored::Str(read_slice(self.bytes, &mut self.at, len)?)
            }
        };
        (self.at <= self.end).then_some(Field { value, place: start..self.at })
    }
}

/// A record's header: its number, its time, where its fields start and
/// where it ends.
struct Header {
    number: u64,
    time: i64,
    fields: usize,
    end: usize,
}

/// The header of the record at `at`.
fn record_header(bytes: &[u8], at: usize) -> Option<Header> {
    let mut at = at;
    let fields = usize::try_from(read_varint(bytes, &mut at)?).ok()?;
    let number = read_varint(bytes, &mut at)?;
    let time = i64::from_le_bytes(read_array(bytes, &mut at)?);
    let end = at.checked_add(fields).filter(|&end| end <= bytes.len())?;
    Some(Header { number, time, fields: at, end })
}

/// The key at the start of a buffer and where its records start.
fn decode_key(bytes: &[u8]) -> Option<(KeyView<'_>, usize)> {
    let mut at = 0;
    let key = match read_varint(bytes, &mut at)? {
        0 => KeyView::Int(i64::from_le_bytes(read_array(bytes, &mut at)?)),
        len_plus_one => {
            let len = usize::try_from(len_plus_one - 1).ok()?;
            KeyView::Str(read_slice(bytes, &mut at, len)?)
        }
    };
    Some((key, at))
}

fn write_field(out: &mut Vec<u8>, arg: &Arg<'_>) {
    match *arg {
        Arg::None => {}
        Arg::Int(int) => out.extend_from_slice(&int.to_le_bytes()),
        Arg::Float(float) => out.extend_from_slice(&float.to_le_bytes()),
        Arg::Decimal(decimal) => out.extend_from_slice(&decimal.serialize()),
        Arg::Bool(flag) => out.push(u8::from(flag)),
        Arg::Str(text) => {
            write_varint(out, text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        }
    }
}

fn read_array<const N: usize>(bytes: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let array = *bytes.get(*at..)?.first_chunk::<N>()?;
    *at += N;
    Some(array)
}

fn read_slice<'a>(bytes: &'a [u8], at: &mut usize, len: usize) -> Option<&'a [u8]> {
    let slice = bytes.get(*at..at.checked_add(len)?)?;
    *at += len;
    Some(slice)
}

/// LEB128: seven bits a byte, low first, the top bit set on all but the
/// last.
fn write_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

fn varint_len(n: u64) -> usize {
    (64 - n.leading_zeros() as usize).div_ceil(7).max(1)
}

/// The bytes the allocator reserves for a block of `requested` bytes:
/// glibc's malloc adds an 8-byte header, rounds up to 16 and hands out at
/// least 32. Other allocators differ by a few bytes a block.
pub(super) fn allocation_bytes(requested: usize) -> usize {
    if requested == 0 { 0 } else { requested.saturating_add(8).next_multiple_of(16).max(32) }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    const KINDS: [ArgKind; 6] =
        [ArgKind::None, ArgKind::Int, ArgKind::Decimal, ArgKind::Float, ArgKind::Str, ArgKind::Bool];

    fn read_back(records: &KeyRecords) -> Vec<(i64, Vec<Stored<'_>>)> {
        records
            .iter()
            .map(|record| {
                let mut fields = record.fields;
                (record.time, KINDS.iter().filter_map(|&kind| fields.next(kind)).map(|f| f.value).collect())
            })
            .collect()
    }

    fn written<'a>(time: i64, text: &'a str, decimal: Decimal) -> (i64, Vec<Stored<'a>>) {
        let fields =
            [Stored::Int(time), Stored::Decimal(decimal), Stored::Float(-0.5), Stored::Str(text.as_bytes())];
        (time, fields.into_iter().chain([Stored::Bool(true)]).collect())
    }

    #[test]
    fn records_read_back_as_written_and_prune_in_order() {
        let long = "x".repeat(300);
        let decimal = Decimal::from_str("-1.50").unwrap();
        let entered = [(i64::MIN, ""), (7, long.as_str()), (i64::MAX, "é")];
        for key in [KeyView::Int(i64::MIN), KeyView::Str(b""), KeyView::Str(long.as_bytes())] {
            let mut records = KeyRecords::new(key, 0);
            for (number, (time, text)) in entered.into_iter().enumerate() {
                let args =
                    [Arg::None, Arg::Int(time), Arg::Decimal(decimal), Arg::Float(-0.5), Arg::Str(text)];
                records.push(number as u64 * 200, time, &[&args[..], &[Arg::Bool(true)]].concat());
            }
            assert_eq!(records.key(), Some(key));
            let all: Vec<_> = entered.iter().map(|&(time, text)| written(time, text, decimal)).collect();
            assert_eq!(read_back(&records), all);
            records.prune(|time| time == 7);
            assert_eq!(read_back(&records), [all[0].clone(), all[2].clone()]);
            assert_eq!(records.key(), Some(key));
            assert!(!records.remove(200) && records.remove(0) && records.count() == 1);
            assert_eq!(read_back(&records), [all[2].clone()]);
        }
    }

    #[test]
    fn varints_and_lengths_agree() {
        for n in [0, 1, 127, 128, 16_383, 16_384, u64::from(u32::MAX), u64::MAX] {
            let mut bytes = Vec::new();
            write_varint(&mut bytes, n);
            assert_eq!(bytes.len(), varint_len(n), "{n}");
            assert_eq!(read_varint(&bytes, &mut 0), Some(n));
        }
        let args = [Arg::Str(&"y".repeat(200)), Arg::Int(1), Arg::None];
        let mut records = KeyRecords::new(KeyView::Int(0), record_len(300, &args));
        let before = records.bytes.capacity();
        records.push(300, 3, &args);
        assert_eq!(records.bytes.len(), before, "the first record fills the reserved block exactly");
        assert_eq!(read_varint(&[0x80; 20], &mut 0), None, "an unterminated varint stops");
    }
}
