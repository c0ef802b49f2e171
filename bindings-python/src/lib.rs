//! `rlmeta._native`: the native half of the Python binding.
//!
//! Owns: converting Python types to and from core types, and mapping the core's error kinds to a
//! Python exception hierarchy (one class per kind, made once at import from [`ErrorKind::ALL`]).
//! Never: rules, defaults or validation of its own; the Pythonic API lives in `python/rlmeta/`.
//! Records cross the boundary as the core's JSON text (vectors README §1), 64-bit numbers exact.

mod api;
mod files;
mod level;
mod reconcile;

use std::ffi::CString;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyType};
use rlmeta::json::{Int64Style, decode_value_to_json, encode_value_from_json};
use rlmeta::{Error, ErrorKind, RecordKey};

/// Inputs at least this long are decoded or encoded with the GIL released; shorter calls are
/// faster than releasing and taking it back.
const DETACH_MIN_LEN: usize = 64 * 1024;

/// A record key's fields, in `RecordKey`'s order.
type KeyFields = (String, String, i32, i64, i32, bool);

/// The exception classes: the base `RlmetaError` and one subclass per core kind.
struct ErrorTypes {
    base: Py<PyType>,
    by_kind: Vec<(ErrorKind, String, Py<PyType>)>,
}

static ERROR_TYPES: PyOnceLock<ErrorTypes> = PyOnceLock::new();

/// `invalid_utf8` -> `InvalidUtf8Error`.
fn class_name(kind: ErrorKind) -> String {
    let mut name: String = kind
        .name()
        .split('_')
        .map(|w| {
            w.get(..1).unwrap_or_default().to_ascii_uppercase() + w.get(1..).unwrap_or_default()
        })
        .collect();
    name.push_str("Error");
    name
}

fn new_class<'py>(
    py: Python<'py>,
    name: &str,
    doc: &str,
    base: &Bound<'py, PyType>,
    attrs: &[(&str, Bound<'py, PyAny>)],
) -> PyResult<Py<PyType>> {
    // Attributes are set after creation: pyo3 0.30.1's `new_type` drops its `dict` argument
    // before the class is made from it (a use-after-free that crashed the import).
    let (name, doc) = (CString::new(format!("rlmeta.{name}"))?, CString::new(doc)?);
    let class = PyErr::new_type(py, &name, Some(&doc), Some(base), None)?;
    for (key, value) in attrs {
        class.bind(py).setattr(*key, value)?;
    }
    Ok(class)
}

fn make_error_types(py: Python<'_>) -> PyResult<ErrorTypes> {
    let none = || py.None().into_bound(py);
    let attrs = ["code", "kind", "offset", "field", "message"].map(|a| (a, none()));
    let doc = "An rlmeta error. .code and .kind name the kind (the same numbers in every binding), \
               .offset the byte of the input where it was found, .field the schema field, .message the text.";
    let base = new_class(
        py,
        "RlmetaError",
        doc,
        &py.get_type::<PyException>(),
        &attrs,
    )?;
    let mut by_kind = Vec::new();
    for kind in ErrorKind::ALL {
        let name = class_name(kind);
        let attrs = [
            ("code", kind.code().into_pyobject(py)?.into_any()),
            ("kind", kind.name().into_pyobject(py)?.into_any()),
        ];
        let doc = format!("rlmeta error kind {} (code {}).", kind.name(), kind.code());
        by_kind.push((
            kind,
            name.clone(),
            new_class(py, &name, &doc, base.bind(py), &attrs)?,
        ));
    }
    Ok(ErrorTypes { base, by_kind })
}

/// The Python exception of a core error: its kind's class, with offset, field and message set.
pub(crate) fn to_py_err(py: Python<'_>, e: &Error) -> PyErr {
    let Some(types) = ERROR_TYPES.get(py) else {
        return PyRuntimeError::new_err(e.to_string());
    };
    let class = types
        .by_kind
        .iter()
        .find(|(k, _, _)| *k == e.kind())
        .map_or(&types.base, |(_, _, c)| c);
    let err = PyErr::from_type(class.bind(py).clone(), e.to_string());
    let value = err.value(py);
    let set = value
        .setattr("offset", e.offset())
        .and_then(|()| value.setattr("field", e.field_name()))
        .and_then(|()| value.setattr("message", e.message()));
    match set {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// Runs a core call: with the GIL released when `len` is large, a panic turned into an
/// `InternalError`, and a core error into its Python exception.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    len: usize,
    f: impl FnOnce() -> rlmeta::Result<T> + Send,
) -> PyResult<T> {
    let guarded = move || {
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned());
            Err(Error::new(
                ErrorKind::Internal,
                format!("panic in rlmeta: {}", what.unwrap_or_default()),
            ))
        })
    };
    let result = if len >= DETACH_MIN_LEN {
        py.detach(guarded)
    } else {
        guarded()
    };
    result.map_err(|e| to_py_err(py, &e))
}

fn key_fields(k: RecordKey) -> KeyFields {
    (
        k.topic_id.to_string(),
        k.topic,
        k.partition,
        k.end_offset,
        k.broker_leader_epoch,
        k.update,
    )
}

/// Decodes a `__remote_log_metadata` record value to the JSON text `{"apiKey", "version", "record"}`.
#[pyfunction]
fn decode_value_json(py: Python<'_>, value: &[u8]) -> PyResult<String> {
    run(py, value.len(), || {
        decode_value_to_json(value, Int64Style::Number)
    })
}

/// Encodes the JSON text `{"apiKey", "version", "record"}` to record value bytes.
#[pyfunction]
fn encode_value_json(py: Python<'_>, text: String) -> PyResult<Vec<u8>> {
    run(py, text.len(), || encode_value_from_json(&text))
}

/// The KIP-1266 key text of these fields.
#[pyfunction]
fn key_format(
    py: Python<'_>,
    topic_id: String,
    topic: String,
    partition: i32,
    end_offset: i64,
    broker_leader_epoch: i32,
    update: bool,
) -> PyResult<String> {
    run(py, 0, || {
        Ok(RecordKey::from_text(
            &topic_id,
            &topic,
            partition,
            end_offset,
            broker_leader_epoch,
            update,
        )?
        .format())
    })
}

/// Parses a KIP-1266 key (text, or the UTF-8 bytes of a record's key) into its fields.
#[pyfunction]
fn key_parse(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<KeyFields> {
    if let Ok(bytes) = key.cast::<PyBytes>() {
        let bytes = bytes.as_bytes();
        return run(py, 0, || RecordKey::parse_bytes(bytes).map(key_fields));
    }
    let text: String = key.extract()?;
    run(py, 0, || RecordKey::parse(&text).map(key_fields))
}

/// The fields of the key KIP-1266 writes for a record value.
#[pyfunction]
fn key_for_value(py: Python<'_>, value: &[u8]) -> PyResult<KeyFields> {
    run(py, value.len(), || {
        rlmeta::decode_value(value)
            .and_then(|v| RecordKey::for_value(&v))
            .map(key_fields)
    })
}

/// The partition of `__remote_log_metadata` (0..num_partitions) holding a user partition.
#[pyfunction]
fn metadata_partition(
    py: Python<'_>,
    topic_id: String,
    partition: i32,
    num_partitions: i32,
) -> PyResult<i32> {
    run(py, 0, || {
        rlmeta::partitioner::metadata_partition_of(&topic_id, partition, num_partitions)
    })
}

/// The error code of the kind of fault a Kafka exception text names, or None.
#[pyfunction]
fn error_kind_for_kafka_message(text: String) -> Option<u32> {
    ErrorKind::from_kafka_message(&text).map(ErrorKind::code)
}

/// Every error kind's name and code, in code order.
#[pyfunction]
fn error_codes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let codes = PyDict::new(py);
    for kind in ErrorKind::ALL {
        codes.set_item(kind.name(), kind.code())?;
    }
    Ok(codes)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", rlmeta::VERSION)?;
    let types = ERROR_TYPES.get_or_try_init(py, || make_error_types(py))?;
    m.add("RlmetaError", types.base.bind(py))?;
    for (_, name, class) in &types.by_kind {
        m.add(name.as_str(), class.bind(py))?;
    }
    m.add_function(wrap_pyfunction!(decode_value_json, m)?)?;
    m.add_function(wrap_pyfunction!(encode_value_json, m)?)?;
    m.add_function(wrap_pyfunction!(key_format, m)?)?;
    m.add_function(wrap_pyfunction!(key_parse, m)?)?;
    m.add_function(wrap_pyfunction!(key_for_value, m)?)?;
    m.add_function(wrap_pyfunction!(metadata_partition, m)?)?;
    m.add_function(wrap_pyfunction!(error_kind_for_kafka_message, m)?)?;
    m.add_function(wrap_pyfunction!(error_codes, m)?)?;
    api::register(m)?;
    reconcile::register(m)?;
    level::register(m)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_follow_the_kind_names() {
        let names: Vec<String> = ErrorKind::ALL.into_iter().map(class_name).collect();
        assert!(names.contains(&"InvalidUtf8Error".to_owned()), "{names:?}");
        assert!(
            names.contains(&"BadFrameVersionError".to_owned()),
            "{names:?}"
        );
        assert!(names.contains(&"InternalError".to_owned()), "{names:?}");
    }
}
