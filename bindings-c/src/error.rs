//! The error handle of the C ABI, and the guard every exported function runs in.

use std::any::Any;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::OnceLock;

use rlmeta::{Error, ErrorKind};

use crate::RLMETA_OK;

/// An error returned by an rlmeta function: its code, kind, message and position. Opaque; read
/// it with the `rlmeta_error_*` accessors and release it with `rlmeta_error_free`. Strings
/// returned by the accessors are borrowed from the handle and valid until it is freed.
pub struct RlmetaError {
    code: u32,
    kind: CString,
    message: CString,
    description: CString,
    field: Option<CString>,
    offset: Option<usize>,
}

impl RlmetaError {
    fn new(e: &Error) -> RlmetaError {
        RlmetaError {
            code: e.code(),
            kind: c_text(e.kind().name()),
            message: c_text(e.message()),
            description: c_text(&e.to_string()),
            field: e.field_name().map(c_text),
            offset: e.offset(),
        }
    }
}

/// A C string of `s`; NUL bytes (which rlmeta's texts do not contain) become U+FFFD.
pub(crate) fn c_text(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{fffd}")).unwrap_or_default()
}

/// The error for a NULL pointer where one is required.
pub(crate) fn null_argument(name: &str) -> Error {
    Error::field(
        ErrorKind::InvalidArgument,
        name,
        format!("{name} must not be NULL"),
    )
}

pub(crate) fn panic_error(payload: Box<dyn Any + Send>) -> Error {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    // The payload is dropped here; a payload whose drop panics is leaked instead.
    if catch_unwind(AssertUnwindSafe(|| drop(payload))).is_err() {
        return Error::new(ErrorKind::Internal, "panic in rlmeta");
    }
    Error::new(ErrorKind::Internal, format!("panic in rlmeta: {what}"))
}

/// Runs `f` with panics caught; returns its status code and, on failure, stores an error handle
/// in `*err` when `err` is not NULL.
pub(crate) fn guard(err: *mut *mut RlmetaError, f: impl FnOnce() -> rlmeta::Result<()>) -> u32 {
    let result = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_error(p)));
    let Err(e) = result else {
        return RLMETA_OK;
    };
    if !err.is_null() {
        let handle = catch_unwind(|| Box::into_raw(Box::new(RlmetaError::new(&e))));
        // SAFETY: `err` is not NULL and the caller promises it is writable.
        unsafe { err.write(handle.unwrap_or(ptr::null_mut())) };
    }
    e.code()
}

/// The static name of an error code, if the code names a kind.
pub(crate) fn kind_name(code: u32) -> Option<&'static CStr> {
    static NAMES: OnceLock<Vec<(u32, CString)>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            ErrorKind::ALL
                .into_iter()
                .map(|k| (k.code(), c_text(k.name())))
                .collect()
        })
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| name.as_c_str())
}

/// The error's code (an `RLMETA_*` status, never `RLMETA_OK`), or `RLMETA_OK` for NULL.
///
/// # Safety
/// `err` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_error_code(err: *const RlmetaError) -> u32 {
    // SAFETY: the caller's promise.
    unsafe { err.as_ref() }.map_or(RLMETA_OK, |e| e.code)
}

/// The stable name of the error's kind ("truncated", ...), or NULL for NULL.
///
/// # Safety
/// `err` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_error_kind(err: *const RlmetaError) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe { err.as_ref() }.map_or(ptr::null(), |e| e.kind.as_ptr())
}

/// The message alone (what was wrong), or NULL for NULL.
///
/// # Safety
/// `err` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_error_message(err: *const RlmetaError) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe { err.as_ref() }.map_or(ptr::null(), |e| e.message.as_ptr())
}

/// The whole description: kind, code, position and message, e.g.
/// "truncated (code 1) at byte 17, field startOffset: ...". NULL for NULL.
///
/// # Safety
/// `err` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_error_describe(err: *const RlmetaError) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe { err.as_ref() }.map_or(ptr::null(), |e| e.description.as_ptr())
}

/// The schema field (dotted path) or argument name involved, or NULL when none is known.
///
/// # Safety
/// `err` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_error_field(err: *const RlmetaError) -> *const c_char {
    // SAFETY: the caller's promise.
    unsafe { err.as_ref() }
        .and_then(|e| e.field.as_deref())
        .map_or(ptr::null(), CStr::as_ptr)
}

/// The byte offset into the input where the fault was found, or -1 when none is known.
///
/// # Safety
/// `err` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_error_offset(err: *const RlmetaError) -> i64 {
    // SAFETY: the caller's promise.
    unsafe { err.as_ref() }
        .and_then(|e| e.offset)
        .and_then(|o| i64::try_from(o).ok())
        .unwrap_or(-1)
}

/// Releases an error handle. NULL is accepted.
///
/// # Safety
/// `err` is NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_error_free(err: *mut RlmetaError) {
    if !err.is_null() {
        // SAFETY: the handle came from `Box::into_raw` in `guard`.
        drop(unsafe { Box::from_raw(err) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_error() {
        let mut err: *mut RlmetaError = ptr::null_mut();
        let code = guard(&mut err, || panic!("boom"));
        assert_eq!(code, ErrorKind::Internal.code());
        assert_eq!(unsafe { rlmeta_error_code(err) }, 99);
        let msg = unsafe { CStr::from_ptr(rlmeta_error_message(err)) };
        assert_eq!(msg.to_str().unwrap(), "panic in rlmeta: boom");
        assert_eq!(unsafe { rlmeta_error_offset(err) }, -1);
        assert!(unsafe { rlmeta_error_field(err) }.is_null());
        unsafe { rlmeta_error_free(err) };
        // With no error pointer, only the code comes back.
        assert_eq!(guard(ptr::null_mut(), || panic!("{}", 1)), 99);
    }

    #[test]
    fn accessors_accept_null() {
        unsafe {
            assert_eq!(rlmeta_error_code(ptr::null()), 0);
            assert!(rlmeta_error_message(ptr::null()).is_null());
            assert!(rlmeta_error_kind(ptr::null()).is_null());
            assert!(rlmeta_error_describe(ptr::null()).is_null());
            assert!(rlmeta_error_field(ptr::null()).is_null());
            assert_eq!(rlmeta_error_offset(ptr::null()), -1);
            rlmeta_error_free(ptr::null_mut());
        }
    }
}
