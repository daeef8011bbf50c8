//! A Python `str`'s text, borrowed. CPython keeps a `str`'s UTF-8 form
//! with the object (the characters themselves for an ASCII `str`, a copy
//! made once and cached otherwise), and `PyUnicode_AsUTF8AndSize` hands
//! it out. PyO3 leaves that call out of abi3 builds for CPython 3.9 (it
//! entered the stable ABI in 3.10), and its `to_cow` there encodes every
//! `str` into a new `bytes` object: most of an input's conversion cost
//! (docs/PERFORMANCE.md, "Python"). Every CPython 3 exports the call, so
//! it is declared here. And [`written`]: the runtime's UTF-8 output as a
//! `String` without a second pass; [`argument`]: a `str` argument's text,
//! or an `InputError` at its name; [`request_bytes`]: a request line's
//! bytes, as the CLI would read them.

use std::borrow::Cow;
use std::os::raw::c_char;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

unsafe extern "C" {
    fn PyUnicode_AsUTF8AndSize(unicode: *mut ffi::PyObject, size: *mut ffi::Py_ssize_t) -> *const c_char;
}

/// The text of `text`, borrowed for as long as the `str` is; an error
/// for a `str` that is not valid Unicode (a lone surrogate).
pub fn utf8<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a live `str` (the borrow keeps it alive), and the
    // GIL is held (`Bound`). The pointer, when not null, is the `str`'s
    // own UTF-8 buffer of `size` bytes, which lives as long as the `str`,
    // that is at least for `'a`; the call fails (null) rather than encode
    // a lone surrogate, so the bytes are valid UTF-8.
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut size);
        if data.is_null() {
            return Err(PyErr::fetch(text.py()));
        }
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
        Ok(std::str::from_utf8_unchecked(bytes))
    }
}

/// The text the runtime's writers wrote (UTF-8 always; checked, not
/// copied, and any byte that is not UTF-8 replaced rather than trusted).
pub fn written(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Why a `str` that cannot be UTF-8 is refused.
pub const LONE_SURROGATE: &str = "a str that is not valid Unicode (a lone surrogate)";

/// The text of the `str` argument `name` (`channel`, `now`): an
/// `InputError` at path `name` for a lone surrogate, as for the same
/// `str` in an input.
pub fn argument<'a>(value: Option<&'a Bound<'_, PyString>>, name: &str) -> PyResult<Option<&'a str>> {
    let Some(value) = value else { return Ok(None) };
    utf8(value).map(Some).map_err(|_| {
        let invalid = runtime::InvalidInput::one(name, LONE_SURROGATE);
        crate::errors::input_error(value.py(), &invalid)
    })
}

/// A request line's bytes: its UTF-8, or, for a `str` with a lone
/// surrogate, the bytes `surrogatepass` encodes, which are not UTF-8: the
/// runtime answers them as `rulec eval` answers such a line.
pub fn request_bytes<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(text) = utf8(text) {
        return Ok(Cow::Borrowed(text.as_bytes()));
    }
    let bytes = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    Ok(Cow::Owned(bytes.extract::<Vec<u8>>()?))
}
