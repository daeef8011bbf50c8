//! A Python `str`'s text, borrowed. CPython keeps a `str`'s UTF-8 form
//! with the object (the characters themselves for an ASCII `str`, a copy
//! made once and cached otherwise), and `PyUnicode_AsUTF8AndSize` hands
//! it out. PyO3 leaves that call out of abi3 builds for CPython 3.9 (it
//! entered the stable ABI in 3.10), and its `to_cow` there encodes every
//! `str` into a new `bytes` object: most of an input's conversion cost
//! (docs/PERFORMANCE.md, "Python"). Every CPython 3 exports the call, so
//! it is declared here. And [`written`]: the runtime's UTF-8 output as a
//! `String` without a second pass.

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
