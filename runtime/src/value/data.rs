//! The data layout every engine reads: inputs and constants as flat arrays
//! of 24-byte [`Slot`]s.
//!
//! A record is not a slot: its fields are laid out inline, one after the
//! other ([`crate::value::layout`] gives each type's width and field offsets), so
//! `source.country` is a fixed slot offset known at load time. A scalar is
//! one slot; a list is one slot pointing at its elements, which are laid
//! out with the element type's width as stride. The layout is `repr(C)` so
//! generated code can read it directly.
//!
//! Slots hold raw pointers (strings, list elements). They are only ever
//! built by a [`Store`] (or by request parsing into one), which owns or
//! borrows everything they point at; readers get safe views whose lifetime
//! is the store's. That is the whole safety argument: no slot outlives the
//! store it was built in, and no slot is built from outside this crate.

use std::marker::PhantomData;

use rust_decimal::Decimal;

/// What a slot holds. Types are known statically, so the tag is used for
/// absence and as a safety check, not for dispatch.
#[repr(u64)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tag {
    Absent = 0,
    Bool = 1,
    Int = 2,
    Decimal = 3,
    Float = 4,
    Str = 5,
    Timestamp = 6,
    Duration = 7,
    List = 8,
}

/// One scalar cell: a tag and two 64-bit words.
///
/// | tag | `a` | `b` |
/// | --- | --- | --- |
/// | Bool | 0 or 1 | 0 |
/// | Int, Timestamp, Duration | the `i64` | 0 |
/// | Float | the `f64` bits | 0 |
/// | Decimal | mantissa bits 0..64 | mantissa bits 64..96, then rust_decimal's flags in bits 32..64 (scale in bits 48..56, sign in bit 63) |
/// | Str | pointer to UTF-8 bytes | length in bytes |
/// | List | pointer to the first element slot | element count |
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    tag: Tag,
    a: u64,
    b: u64,
}

// SAFETY: a slot is plain data; the pointers it holds are only read through
// views tied to the lifetime of the store that owns or borrows the target.
unsafe impl Send for Slot {}
// SAFETY: as for `Send`: nothing is written through a slot's pointers.
unsafe impl Sync for Slot {}

impl Slot {
    pub const ABSENT: Slot = Slot { tag: Tag::Absent, a: 0, b: 0 };
    /// Bytes per slot, and the byte offsets of its tag and words, for
    /// generated code.
    pub const SIZE: usize = std::mem::size_of::<Slot>();
    pub const TAG: usize = std::mem::offset_of!(Slot, tag);
    pub const A: usize = std::mem::offset_of!(Slot, a);
    pub const B: usize = std::mem::offset_of!(Slot, b);

    pub fn tag(&self) -> Tag {
        self.tag
    }

    /// The two payload words, for generated code and tests.
    pub fn words(&self) -> (u64, u64) {
        (self.a, self.b)
    }

    pub fn bool(value: bool) -> Slot {
        Slot { tag: Tag::Bool, a: u64::from(value), b: 0 }
    }

    pub fn int(value: i64) -> Slot {
        Slot { tag: Tag::Int, a: value as u64, b: 0 }
    }

    pub fn float(value: f64) -> Slot {
        Slot { tag: Tag::Float, a: value.to_bits(), b: 0 }
    }

    pub fn timestamp(nanos: i64) -> Slot {
        Slot { tag: Tag::Timestamp, a: nanos as u64, b: 0 }
    }

    pub fn duration(nanos: i64) -> Slot {
        Slot { tag: Tag::Duration, a: nanos as u64, b: 0 }
    }

    pub fn decimal(value: Decimal) -> Slot {
        let (a, b) = pack_decimal(value);
        Slot { tag: Tag::Decimal, a, b }
    }

    /// A string slot pointing at `text`, which must outlive every reader:
    /// only stores call this.
    fn str_unchecked(text: &str) -> Slot {
        Slot { tag: Tag::Str, a: text.as_ptr() as u64, b: text.len() as u64 }
    }

    fn list_unchecked(elements: &[Slot], count: usize) -> Slot {
        Slot { tag: Tag::List, a: elements.as_ptr() as u64, b: count as u64 }
    }

    /// A slot from its tag and words (native code's values, back).
    ///
    /// # Safety
    ///
    /// A string or list slot built this way points wherever its words
    /// say: the caller vouches that they point at live text or slots of
    /// the tag's kind, for as long as the slot is read.
    pub(crate) unsafe fn from_words(tag: Tag, a: u64, b: u64) -> Slot {
        Slot { tag, a, b }
    }

    pub fn is_absent(&self) -> bool {
        self.tag == Tag::Absent
    }

    pub fn as_bool(&self) -> bool {
        self.a != 0
    }

    pub fn as_int(&self) -> i64 {
        self.a as i64
    }

    pub fn as_float(&self) -> f64 {
        f64::from_bits(self.a)
    }

    pub fn as_decimal(&self) -> Decimal {
        unpack_decimal(self.a, self.b)
    }
}

/// Packs a decimal into two words: the 96-bit mantissa, then the flags.
pub fn pack_decimal(value: Decimal) -> (u64, u64) {
    let bytes = value.serialize();
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let (flags, lo, mid, hi) = (word(0), word(4), word(8), word(12));
    (u64::from(lo) | (u64::from(mid) << 32), u64::from(hi) | (u64::from(flags) << 32))
}

/// The inverse of [`pack_decimal`]. The common case builds the decimal
/// from its parts in line; a negative zero (whose sign `from_parts` would
/// drop) and a scale no `Decimal` has take `Decimal::deserialize`, so
/// every slot unpacks to exactly the decimal it was packed from.
#[inline]
pub fn unpack_decimal(a: u64, b: u64) -> Decimal {
    let flags = (b >> 32) as u32;
    let (lo, mid, hi) = (a as u32, (a >> 32) as u32, b as u32);
    let negative = flags & 0x8000_0000 != 0;
    let scale = (flags >> 16) & 0xff;
    if scale > Decimal::MAX_SCALE || negative && a == 0 && hi == 0 {
        return unpack_decimal_rare(a, b);
    }
    Decimal::from_parts(lo, mid, hi, negative, scale)
}

#[cold]
#[inline(never)]
fn unpack_decimal_rare(a: u64, b: u64) -> Decimal {
    let mut bytes = [0u8; 16];
    bytes[0..4].copy_from_slice(&((b >> 32) as u32).to_le_bytes());
    bytes[4..8].copy_from_slice(&(a as u32).to_le_bytes());
    bytes[8..12].copy_from_slice(&((a >> 32) as u32).to_le_bytes());
    bytes[12..16].copy_from_slice(&(b as u32).to_le_bytes());
    Decimal::deserialize(bytes)
}

/// Owns slots and what they point at: the backing of an input or of a
/// contract's constants. `'r` is the lifetime of borrowed text (request
/// bytes); owned text and list elements live in the store's arenas, whose
/// heap blocks never move while the store lives.
#[derive(Debug, Default)]
pub struct Store<'r> {
    /// Boxed list element arrays.
    lists: Vec<Box<[Slot]>>,
    /// Owned strings (escaped input strings, constants).
    strings: Vec<Box<str>>,
    _borrowed: PhantomData<&'r str>,
}

impl<'r> Store<'r> {
    pub fn new() -> Self {
        Store { lists: Vec::new(), strings: Vec::new(), _borrowed: PhantomData }
    }

    /// A slot for text borrowed for `'r`.
    pub fn borrowed_str(&mut self, text: &'r str) -> Slot {
        Slot::str_unchecked(text)
    }

    /// A slot for text the store keeps.
    pub fn owned_str(&mut self, text: impl Into<Box<str>>) -> Slot {
        let boxed: Box<str> = text.into();
        let slot = Slot::str_unchecked(&boxed);
        self.strings.push(boxed);
        slot
    }

    /// A slot for a list of `count` elements laid out in `elements`.
    pub fn list(&mut self, elements: Vec<Slot>, count: usize) -> Slot {
        let boxed = elements.into_boxed_slice();
        let slot = Slot::list_unchecked(&boxed, count);
        self.lists.push(boxed);
        slot
    }
}

/// A record: its fields' slots, laid out by its type. Borrowed for `'a`,
/// the lifetime of the store behind them.
#[derive(Clone, Copy, Debug)]
pub struct RecordRef<'a> {
    slots: &'a [Slot],
}

impl<'a> RecordRef<'a> {
    /// A view of slots that belong to a store living for `'a`.
    ///
    /// # Safety
    /// Every pointer inside `slots` (recursively) must stay valid for `'a`:
    /// the slots must come from a [`Store`] (or an input) that lives for
    /// `'a`.
    pub unsafe fn new(slots: &'a [Slot]) -> Self {
        RecordRef { slots }
    }

    pub fn slots(&self) -> &'a [Slot] {
        self.slots
    }

    /// The slot at `offset`.
    pub fn slot(&self, offset: usize) -> &'a Slot {
        &self.slots[offset]
    }

    /// The record laid out at `offset` with `width` slots.
    pub fn record(&self, offset: usize, width: usize) -> RecordRef<'a> {
        RecordRef { slots: &self.slots[offset..offset + width] }
    }

    /// The string in the slot at `offset` (which must be a string slot).
    pub fn str(&self, offset: usize) -> &'a str {
        slot_str(&self.slots[offset])
    }

    /// The list in the slot at `offset`, elements `stride` slots wide.
    pub fn list(&self, offset: usize, stride: usize) -> ListRef<'a> {
        slot_list(&self.slots[offset], stride)
    }
}

/// Reads a string slot of a view.
fn slot_str(slot: &Slot) -> &str {
    if slot.tag != Tag::Str {
        return "";
    }
    // SAFETY: string slots are built by a store from a `&str` that lives as
    // long as the store, and views do not outlive their store.
    unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(slot.a as *const u8, slot.b as usize)) }
}

/// Reads a string slot that is not inside a view.
///
/// # Safety
/// The slot's string must stay valid for `'a`.
pub unsafe fn detached_str<'a>(slot: Slot) -> &'a str {
    if slot.tag != Tag::Str || slot.b == 0 {
        return "";
    }
    // SAFETY: the caller vouches for the string.
    unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(slot.a as *const u8, slot.b as usize)) }
}

/// Reads a list slot that is not inside a view.
///
/// # Safety
/// The slot's elements must stay valid for `'a`.
pub unsafe fn detached_list<'a>(slot: Slot, stride: usize) -> ListRef<'a> {
    let list = slot_list(&slot, stride);
    ListRef { elements: list.elements, len: list.len, stride: list.stride, _store: PhantomData }
}

/// Reads a list slot of a view.
fn slot_list(slot: &Slot, stride: usize) -> ListRef<'_> {
    let stride = u32::try_from(stride.max(1)).unwrap_or(u32::MAX);
    if slot.tag != Tag::List || slot.b == 0 {
        return ListRef { elements: std::ptr::NonNull::dangling(), len: 0, stride, _store: PhantomData };
    }
    // SAFETY: list slots are built by a store from a non-null boxed slice of
    // exactly `len * stride` slots that the store owns for its whole life.
    let elements = unsafe { std::ptr::NonNull::new_unchecked(slot.a as *mut Slot) };
    ListRef { elements, len: u32::try_from(slot.b).unwrap_or(u32::MAX), stride, _store: PhantomData }
}

/// A list's elements, each `stride` slots wide: 16 bytes, so values that
/// hold one stay small.
#[derive(Clone, Copy, Debug)]
pub struct ListRef<'a> {
    elements: std::ptr::NonNull<Slot>,
    len: u32,
    stride: u32,
    _store: PhantomData<&'a [Slot]>,
}

impl<'a> ListRef<'a> {
    /// The list as slot words: a pointer to the first element, the count.
    pub fn words(&self) -> (u64, u64) {
        (self.elements.as_ptr() as u64, u64::from(self.len))
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slots of element `i` (`stride` of them).
    fn element(&self, i: usize) -> &'a [Slot] {
        assert!(i < self.len as usize, "list index checked by the caller");
        let stride = self.stride as usize;
        // SAFETY: `i < len`, and the store behind the list holds
        // `len * stride` slots from `elements` for `'a`.
        unsafe { std::slice::from_raw_parts(self.elements.as_ptr().add(i * stride), stride) }
    }

    /// Element `i` as a record view (width `stride`).
    pub fn record(&self, i: usize) -> RecordRef<'a> {
        RecordRef { slots: self.element(i) }
    }

    /// Element `i` as a slot (lists of scalars, stride 1).
    pub fn slot(&self, i: usize) -> &'a Slot {
        &self.element(i)[0]
    }

    /// The string of element `i`.
    pub fn str(&self, i: usize) -> &'a str {
        slot_str(&self.element(i)[0])
    }

    /// The list in element `i` (lists of lists), elements `stride` wide.
    pub fn list(&self, i: usize, stride: usize) -> ListRef<'a> {
        slot_list(&self.element(i)[0], stride)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn decimals_pack_and_unpack_exactly() {
        for text in
            ["0", "-1.25", "12345678901234567890.123456789", "79228162514264337593543950335", "-0.0000001"]
        {
            let d = Decimal::from_str(text).unwrap();
            let (a, b) = pack_decimal(d);
            let back = unpack_decimal(a, b);
            assert_eq!(back.serialize(), d.serialize(), "{text}: the same bits");
            assert_eq!(back.to_string(), d.to_string());
            assert_eq!((b >> 48) as u8 as u32, d.scale(), "{text}: scale in bits 48..56");
            assert_eq!(b >> 63 == 1, d.is_sign_negative());
        }
    }

    #[test]
    fn a_negative_zero_keeps_its_sign() {
        let mut zero = Decimal::from_str("0.00").unwrap();
        zero.set_sign_negative(true);
        let (a, b) = pack_decimal(zero);
        assert_eq!(unpack_decimal(a, b).serialize(), zero.serialize());
    }

    #[test]
    fn stores_keep_what_slots_point_at() {
        let mut store = Store::new();
        let owned = store.owned_str(String::from("Bäckerei"));
        let elements = vec![Slot::int(1), Slot::int(2)];
        let list = store.list(elements, 2);
        let slots = [owned, list];
        // SAFETY: the store outlives the view.
        let view = unsafe { RecordRef::new(&slots) };
        assert_eq!(view.str(0), "Bäckerei");
        let items = view.list(1, 1);
        assert_eq!((items.len(), items.slot(1).as_int()), (2, 2));
    }
}
