//! Many input records of one contract, laid out row after row as slots:
//! what batch evaluation builds from a chunk of NDJSON lines or an Arrow
//! record batch, and then evaluates row by row.
//!
//! Rows are filled through [`Cells`], whose setters are the only way
//! besides request parsing to make slots: scalars by value, strings
//! borrowed for `'r` (the chunk's bytes, an Arrow buffer) or owned by the
//! records, lists built element by element into the records' store. So the
//! safety argument of [`crate::value::data`] holds: no slot points at anything
//! that does not outlive the records.

use rust_decimal::Decimal;

use crate::input::request::{Input, InvalidInput};
use crate::program::Program;
use crate::value::data::{RecordRef, Slot, Store};

/// `rows` input records of one contract, each `width` slots.
#[derive(Debug)]
pub struct Records<'r> {
    /// The id of the program the records are laid out for.
    program: u64,
    width: usize,
    rows: usize,
    slots: Vec<Slot>,
    store: Store<'r>,
    /// Per row: the reason it is invalid, or `None`.
    problems: Vec<Option<InvalidInput>>,
}

impl<'r> Records<'r> {
    /// `rows` empty (all absent) records for `program` (a contract's:
    /// `Contract::program`).
    pub fn new(program: &Program, rows: usize) -> Records<'r> {
        let width = program.input_width();
        Records {
            program: program.id,
            width,
            rows,
            slots: vec![Slot::ABSENT; width * rows],
            store: Store::new(),
            problems: vec![None; rows],
        }
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    /// Empties the records and makes `rows` absent rows, keeping the
    /// buffer's memory.
    pub fn reset(&mut self, rows: usize) {
        self.slots.clear();
        self.slots.resize(self.width * rows, Slot::ABSENT);
        self.store = Store::new();
        self.problems.clear();
        self.problems.resize(rows, None);
        self.rows = rows;
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Whether these records were laid out for `program`.
    pub fn is_for(&self, program: &Program) -> bool {
        self.program == program.id
    }

    /// Every row's slots, to fill: row `i` is item `i`.
    pub fn cells(&mut self) -> Cells<'_, 'r> {
        Cells { slots: &mut self.slots, stride: self.width, store: &mut self.store }
    }

    /// Reads row `row` from an input record's JSON text (validated as a
    /// request's input is); an invalid record is kept as its problem.
    pub fn parse_row(&mut self, program: &Program, row: usize, text: &'r str) {
        let slots = &mut self.slots[row * self.width..(row + 1) * self.width];
        if let Err(problem) = Input::parse_into(program, text, slots, &mut self.store) {
            self.problems[row] = Some(problem);
        }
    }

    /// Marks row `row` invalid.
    pub fn set_problem(&mut self, row: usize, problem: InvalidInput) {
        self.problems[row] = Some(problem);
    }

    /// Why row `row` is invalid, if it is.
    pub fn problem(&self, row: usize) -> Option<&InvalidInput> {
        self.problems[row].as_ref()
    }

    /// Every row's slots, one after the other (for native code).
    pub(crate) fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Row `row` as a record view.
    pub fn record(&self, row: usize) -> RecordRef<'_> {
        // SAFETY: the row's slots were made by `Cells` or by request
        // parsing, pointing into `self.store` or text borrowed for `'r`,
        // both of which outlive this borrow of `self`.
        unsafe { RecordRef::new(&self.slots[row * self.width..(row + 1) * self.width]) }
    }
}

/// Items to fill: the rows of [`Records`], or a list's elements. Item
/// `i`'s slot at `offset` is slot `i * stride + offset`; the store keeps
/// what strings and lists point at.
#[derive(Debug)]
pub struct Cells<'b, 'r> {
    slots: &'b mut [Slot],
    stride: usize,
    store: &'b mut Store<'r>,
}

impl<'r> Cells<'_, 'r> {
    fn at(&mut self, item: usize, offset: usize) -> &mut Slot {
        &mut self.slots[item * self.stride + offset]
    }

    pub fn set_bool(&mut self, item: usize, offset: usize, value: bool) {
        *self.at(item, offset) = Slot::bool(value);
    }

    pub fn set_int(&mut self, item: usize, offset: usize, value: i64) {
        *self.at(item, offset) = Slot::int(value);
    }

    pub fn set_float(&mut self, item: usize, offset: usize, value: f64) {
        *self.at(item, offset) = Slot::float(value);
    }

    pub fn set_decimal(&mut self, item: usize, offset: usize, value: Decimal) {
        *self.at(item, offset) = Slot::decimal(value);
    }

    /// Nanoseconds since the Unix epoch.
    pub fn set_timestamp(&mut self, item: usize, offset: usize, nanos: i64) {
        *self.at(item, offset) = Slot::timestamp(nanos);
    }

    /// Nanoseconds.
    pub fn set_duration(&mut self, item: usize, offset: usize, nanos: i64) {
        *self.at(item, offset) = Slot::duration(nanos);
    }

    /// A string borrowed for `'r`.
    pub fn set_str(&mut self, item: usize, offset: usize, text: &'r str) {
        let slot = self.store.borrowed_str(text);
        *self.at(item, offset) = slot;
    }

    /// A string the records keep.
    pub fn set_owned_str(&mut self, item: usize, offset: usize, text: String) {
        let slot = self.store.owned_str(text);
        *self.at(item, offset) = slot;
    }

    /// A list of `count` elements, each `stride` slots, filled by `fill`.
    pub fn set_list(
        &mut self,
        item: usize,
        offset: usize,
        count: usize,
        stride: usize,
        fill: impl FnOnce(&mut Cells<'_, 'r>),
    ) {
        let stride = stride.max(1);
        let mut elements = vec![Slot::ABSENT; count * stride];
        fill(&mut Cells { slots: &mut elements, stride, store: self.store });
        let slot = self.store.list(elements, count);
        *self.at(item, offset) = slot;
    }
}
