//! A Python input (a dict of `Decimal`, `int`, `str`, `bool`, `float`,
//! timezone-aware `datetime`, `timedelta`, `None`, lists and nested
//! dicts) written as the JSON text of a request's input, in one pass in
//! Rust, for the runtime's one validator to read: so every message about
//! a value that does not fit the contract is `rulec eval`'s for the same
//! request (docs/decisions.md, "Python package"). Decimals are written as
//! JSON numbers from their exact text, ints from their digits, floats as
//! the shortest text that reads back as the same `f64`.
//!
//! What JSON cannot hold is refused here, with the path of the value:
//! NaN and infinities, a key that is not a string, a naive datetime (or
//! pandas' `NaT`), an object of another type, nesting deeper than
//! [`MAX_DEPTH`]; so is a value whose own methods raise while it is read
//! (a `tzinfo` whose `utcoffset` fails), and a dict or list that changes
//! while it is read (a value's `__str__` that mutates its container):
//! each an `InputError` at the value's path, never a panic.

use ir::quote::short;
use pyo3::exceptions::PyException;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use runtime::InvalidInput;

use crate::pytypes;
use crate::text::{LONE_SURROGATE, utf8};

/// The deepest nesting of lists and dicts an input may have.
pub const MAX_DEPTH: usize = 100;

/// Why an input could not be written: a value JSON cannot hold (with its
/// path), or an exception Python raised while it was read.
pub enum Unwritable {
    Invalid(InvalidInput),
    Python(PyErr),
}

impl From<PyErr> for Unwritable {
    fn from(err: PyErr) -> Unwritable {
        Unwritable::Python(err)
    }
}

/// The JSON text of `value`, the input at path `input`.
pub fn input_json(value: &Bound<'_, PyAny>) -> Result<String, Unwritable> {
    let mut writer = Writer { out: Vec::with_capacity(256), path: vec![Segment::Name("input")] };
    writer.value(value, 0)?;
    writer.text()
}

/// The RFC 3339 text of a timezone-aware datetime (a request's `now`).
pub fn timestamp_text(value: &Bound<'_, PyAny>, path: &'static str) -> Result<String, Unwritable> {
    let mut writer = Writer { out: Vec::new(), path: vec![Segment::Name(path)] };
    if let Ok(text) = value.cast::<PyString>() {
        let Ok(text) = utf8(text) else { return Err(writer.refuse(LONE_SURROGATE.into())) };
        return Ok(text.to_string());
    }
    if !value.is_instance(pytypes::datetime(value.py())?)? {
        return Err(writer.refuse("expected a str or a timezone-aware datetime".into()));
    }
    writer.datetime(value).map_err(|e| writer.raised(value.py(), e))?;
    Ok(writer.text()?.trim_matches('"').to_string())
}

/// A step of the path to the value being written: rendered only when a
/// value is refused, so a dict's key is kept as the `str` itself.
enum Segment<'py> {
    Name(&'static str),
    Key(Bound<'py, PyString>),
    Index(usize),
}

struct Writer<'py> {
    /// UTF-8 JSON text: only `str`s and ASCII are appended.
    out: Vec<u8>,
    path: Vec<Segment<'py>>,
}

impl<'py> Writer<'py> {
    /// The text written, checked once at the end.
    fn text(self) -> Result<String, Unwritable> {
        String::from_utf8(self.out)
            .map_err(|_| Unwritable::Invalid(InvalidInput::one("input", "not valid UTF-8 (a bug in rulec)")))
    }

    fn push(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
    }

    fn path(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            match segment {
                Segment::Name(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Segment::Key(key) => {
                    out.push('.');
                    out.push_str(&key.to_string_lossy());
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn refuse(&self, message: String) -> Unwritable {
        Unwritable::Invalid(InvalidInput::one(&self.path(), message))
    }

    fn value(&mut self, value: &Bound<'py, PyAny>, depth: usize) -> Result<(), Unwritable> {
        if value.is_none() {
            self.push("null");
        } else if let Ok(text) = value.cast::<PyString>() {
            self.string(text)?;
        } else if value.is_instance_of::<PyBool>() {
            self.push(if value.is_truthy()? { "true" } else { "false" });
        } else if value.is_instance_of::<PyInt>() {
            self.int(value)?;
        } else if let Ok(float) = value.cast::<PyFloat>() {
            self.float(float.value())?;
        } else if let Ok(dict) = value.cast::<PyDict>() {
            self.nested(depth)?;
            self.dict(dict, depth + 1)?;
        } else if let Ok(list) = value.cast::<PyList>() {
            self.nested(depth)?;
            let length = list.len();
            self.items(list.iter(), depth + 1)?;
            self.unchanged(list.len() == length, "list")?;
        } else if let Ok(tuple) = value.cast::<PyTuple>() {
            self.nested(depth)?;
            self.items(tuple.iter(), depth + 1)?;
        } else {
            self.object(value).map_err(|e| self.raised(value.py(), e))?;
        }
        Ok(())
    }

    /// `unwritable`, an exception a value's own method raised (a
    /// `tzinfo`'s `utcoffset`, a subclass's `__str__`), as a refusal at
    /// the value's path; `KeyboardInterrupt` and the like pass through.
    fn raised(&self, py: Python<'_>, unwritable: Unwritable) -> Unwritable {
        match unwritable {
            Unwritable::Python(err) if err.is_instance_of::<PyException>(py) => {
                let type_name = err.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
                let message =
                    err.value(py).str().map(|m| m.to_string_lossy().into_owned()).unwrap_or_default();
                self.refuse(format!("reading the value raised {type_name}: {}", short(&message)))
            }
            other => other,
        }
    }

    fn nested(&self, depth: usize) -> Result<(), Unwritable> {
        if depth >= MAX_DEPTH {
            return Err(self.refuse(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn string(&mut self, text: &Bound<'_, PyString>) -> Result<(), Unwritable> {
        let Ok(text) = utf8(text) else {
            return Err(self.refuse(LONE_SURROGATE.into()));
        };
        runtime::value::write_json_str(text, &mut self.out);
        Ok(())
    }

    fn int(&mut self, value: &Bound<'_, PyAny>) -> Result<(), Unwritable> {
        if let Ok(int) = value.extract::<i64>() {
            self.push(itoa::Buffer::new().format(int));
            return Ok(());
        }
        // An int beyond 64 bits: its digits, which the validator refuses
        // (or reads, for a decimal) as it would the same JSON number.
        let Ok(digits) = value.str() else {
            return Err(self.refuse("an int too large to write (more than 4300 digits)".into()));
        };
        let digits = utf8(&digits)?;
        // A subclass's `__str__` may say anything: only digits are written.
        if !is_number(digits) || digits.contains(['.', 'e', 'E']) {
            return Err(self.refuse(format!("got an int whose text is not a number: {}", short(digits))));
        }
        self.push(digits);
        Ok(())
    }

    fn float(&mut self, value: f64) -> Result<(), Unwritable> {
        if !value.is_finite() {
            return Err(
                self.refuse(format!("got {value}: a float must be finite (JSON has no NaN or infinity)"))
            );
        }
        // `Debug` is the shortest text that reads back as `value`, in a
        // form JSON accepts (`0.1`, `1.0`, `1e300`).
        self.push(&format!("{value:?}"));
        Ok(())
    }

    fn dict(&mut self, dict: &Bound<'py, PyDict>, depth: usize) -> Result<(), Unwritable> {
        self.out.push(b'{');
        let size = dict.len();
        let mut position = 0;
        let mut first = true;
        while let Some((key, value)) = next_item(dict, &mut position) {
            let Ok(key) = key.cast::<PyString>() else {
                let shown = key.repr().map(|r| r.to_string()).unwrap_or_default();
                let type_name = key.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                return Err(self.refuse(format!("a key is not a str: {} ({type_name})", short(&shown))));
            };
            if !std::mem::take(&mut first) {
                self.out.push(b',');
            }
            self.string(key)?;
            self.out.push(b':');
            self.path.push(Segment::Key(key.clone()));
            let written = self.value(&value, depth);
            self.path.pop();
            written?;
            self.unchanged(dict.len() == size, "dict")?;
        }
        self.out.push(b'}');
        Ok(())
    }

    /// A refusal when a container's length changed while it was read (a
    /// value's method added or removed items).
    fn unchanged(&self, same: bool, what: &str) -> Result<(), Unwritable> {
        if same {
            return Ok(());
        }
        Err(self.refuse(format!(
            "the {what} changed while it was read (a value's method added or removed items)"
        )))
    }

    fn items(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        depth: usize,
    ) -> Result<(), Unwritable> {
        self.out.push(b'[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.path.push(Segment::Index(i));
            let written = self.value(&item, depth);
            self.path.pop();
            written?;
        }
        self.out.push(b']');
        Ok(())
    }

    /// A `Decimal`, a `datetime`, a `timedelta`, or a refusal.
    fn object(&mut self, value: &Bound<'_, PyAny>) -> Result<(), Unwritable> {
        let py = value.py();
        if value.is_instance(pytypes::decimal(py)?)? {
            return self.decimal(value);
        }
        if value.is_instance(pytypes::datetime(py)?)? {
            return self.datetime(value);
        }
        if value.is_instance(pytypes::timedelta(py)?)? {
            return self.timedelta(value);
        }
        let type_name = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        let hint = if value.is_instance(pytypes::date(py)?)? { " (a date: give a datetime)" } else { "" };
        Err(self.refuse(format!(
            "cannot send a value of type {type_name}{hint}: expected dict, list, tuple, str, int, float, bool, \
             None, Decimal, datetime or timedelta"
        )))
    }

    fn decimal(&mut self, value: &Bound<'_, PyAny>) -> Result<(), Unwritable> {
        let text = value.str()?;
        let text = utf8(&text)?;
        // Only `NaN`, `sNaN` and `Infinity` (signed or not) have an `N`
        // or an `I`; a finite Decimal's text (`-1.50`, `1E+2`, `0E-7`) is
        // a JSON number, unless a subclass's `__str__` says otherwise.
        if text.contains(['N', 'I']) {
            return Err(self.refuse(format!("got Decimal('{text}'): a decimal must be finite")));
        }
        if !is_number(text) {
            return Err(self.refuse(format!("got a Decimal whose text is not a number: {}", short(text))));
        }
        self.push(text);
        Ok(())
    }

    fn datetime(&mut self, value: &Bound<'_, PyAny>) -> Result<(), Unwritable> {
        if value.get_type().name()?.to_cow()? == "NaTType" {
            return Err(
                self.refuse("got NaT (pandas' missing timestamp): give None for a missing value".into())
            );
        }
        let offset = value.call_method0("utcoffset")?;
        if offset.is_none() {
            return Err(self.refuse(
                "a datetime without a timezone is ambiguous: give it a tzinfo (e.g. timezone.utc)".into(),
            ));
        }
        // RFC 3339 offsets are whole minutes: an offset with seconds (a
        // historic zone's mean time, Amsterdam's +00:19:32 until 1937) is
        // written as the same instant in UTC.
        let whole_minutes = offset.getattr("seconds")?.extract::<i64>()? % 60 == 0
            && offset.getattr("microseconds")?.extract::<i64>()? == 0;
        let text = if whole_minutes {
            value.call_method0("isoformat")?
        } else {
            value.call_method1("astimezone", (pytypes::utc(value.py())?,))?.call_method0("isoformat")?
        };
        // Escaped: a subclass's `isoformat` may return any text.
        runtime::value::write_json_str(utf8(text.cast::<PyString>().map_err(PyErr::from)?)?, &mut self.out);
        Ok(())
    }

    fn timedelta(&mut self, value: &Bound<'_, PyAny>) -> Result<(), Unwritable> {
        let days: i64 = value.getattr("days")?.extract()?;
        let seconds: i64 = value.getattr("seconds")?.extract()?;
        let micros: i64 = value.getattr("microseconds")?.extract()?;
        // pandas.Timedelta, a timedelta that also keeps the nanoseconds
        // past its microseconds (0 to 999), in `nanoseconds`.
        let below_micros: i64 =
            if value.hasattr("nanoseconds")? { value.getattr("nanoseconds")?.extract()? } else { 0 };
        let nanos = days
            .checked_mul(86_400)
            .and_then(|s| s.checked_add(seconds))
            .and_then(|s| s.checked_mul(1_000_000_000))
            .and_then(|n| n.checked_add(micros * 1_000))
            .and_then(|n| n.checked_add(below_micros));
        let Some(nanos) = nanos else {
            return Err(self.refuse("a timedelta beyond the range of a duration (about 292 years)".into()));
        };
        self.out.push(b'"');
        self.push(&ir::time::format_duration(nanos));
        self.out.push(b'"');
        Ok(())
    }
}

/// The next entry of `dict` from `position`, key and value owned.
/// `PyDict_Next` reads the dict's table without running Python code (a
/// dict subclass's `items` or `__iter__` is never called) and checks
/// `position` against the table as it is now, so a dict changed between
/// two calls is read safely; PyO3's iterator panics then.
fn next_item<'py>(
    dict: &Bound<'py, PyDict>,
    position: &mut ffi::Py_ssize_t,
) -> Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let mut key = std::ptr::null_mut();
    let mut value = std::ptr::null_mut();
    // SAFETY: the GIL is held (`Bound`) and `dict` is a live dict. The
    // references `PyDict_Next` hands out are borrowed, and made owned
    // before any Python code can run and drop them.
    unsafe {
        if ffi::PyDict_Next(dict.as_ptr(), position, &mut key, &mut value) == 0 {
            return None;
        }
        let py = dict.py();
        Some((Bound::from_borrowed_ptr(py, key), Bound::from_borrowed_ptr(py, value)))
    }
}

/// Whether `text` is a number as JSON writes one: `-`, digits, a
/// fraction, an exponent (`-1.50`, `1E+2`); leading zeros are left to the
/// validator's JSON reader.
fn is_number(text: &str) -> bool {
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    let text = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match text.split_once(['E', 'e']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (text, None),
    };
    let whole = match mantissa.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(mantissa),
    };
    let exponent = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    whole && exponent
}
