//! The one error type of rlmeta.
//!
//! Owns: the table of error kinds and their stable numeric codes (every binding exposes the same
//! numbers), and the message format "what was wrong, and where". Never: logging, recovery, or any
//! decision about what the host should do next.

use std::fmt;

/// What kind of fault an [`Error`] is. The numeric code of a kind never changes and a retired
/// number is never reused; new kinds get new numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before a field was complete (Kafka: `BufferUnderflowException`, "Error
    /// reading byte array of N byte(s): only M byte(s) available").
    Truncated,
    /// A value decoded completely but bytes remain after it ("Found N byte(s) of garbage").
    TrailingBytes,
    /// The serde frame version is not 1.
    BadFrameVersion,
    /// The api key names no `__remote_log_metadata` record type ("Unknown metadata id").
    UnknownApiKey,
    /// A version this schema cannot read or write ("Can't read version N of X", "Tag T is not
    /// valid for version V", "Attempted to write a non-default F at version V").
    UnsupportedVersion,
    /// A length or count that cannot be right: null for a non-nullable field, a string longer
    /// than 0x7fff, a collection larger than the remaining input.
    InvalidLength,
    /// An unsigned varint longer than 5 bytes, or a frame header number above 0x7fff.
    InvalidVarint,
    /// A string field is not UTF-8.
    InvalidUtf8,
    /// A KIP-1266 record key that does not parse.
    InvalidKey,
    /// A Uuid string that is not Kafka's 22-character base64 form.
    InvalidUuid,
    /// A caller-supplied value outside its domain (a partition count of 0, a state id, ...).
    InvalidArgument,
    /// A record in JSON form that is malformed or misses a field.
    InvalidJson,
    /// A value that decodes but that Kafka's object model rejects (an unknown state id, an end
    /// offset below the start offset, no leader epochs).
    InvalidRecord,
    /// A query about a user partition the store does not hold (never loaded, or deleted by
    /// DELETE_PARTITION_FINISHED), or a segment it does not know (Kafka's
    /// `RemoteResourceNotFoundException`).
    NotFound,
    /// A query about a user partition whose replay has not caught up yet (Kafka's
    /// `ReplicaNotAvailableException`: "cache is not initialized").
    NotInitialized,
    /// An operation that the current state forbids: a write the planner refuses because it
    /// would lose a live segment's metadata, an illegal feature-level move.
    InvalidState,
    /// A bug in rlmeta caught at a binding boundary (a panic). Never expected.
    Internal,
    /// Bytes that fail an integrity check: a record batch whose CRC-32C does not match (Kafka's
    /// `CorruptRecordException`), a batch header that cannot be right, compressed data that does
    /// not decompress or fails its own checksum.
    Corrupt,
    /// Input that would make rlmeta use more memory than the caller allowed: compressed records
    /// that decompress past the limit (a decompression bomb, or a limit set too low).
    LimitExceeded,
    /// A layout of remote object keys that does not parse: an unknown field, an unclosed brace,
    /// no `{segment_id}`, fields that touch, an unknown option (the template and character named).
    InvalidLayout,
    /// A layout that matches none of the objects a listing holds (the wrong layout or prefix):
    /// reconciling would call every object orphaned.
    LayoutMismatch,
}

impl ErrorKind {
    /// Every kind, in code order.
    pub const ALL: [ErrorKind; 21] = [
        ErrorKind::Truncated,
        ErrorKind::TrailingBytes,
        ErrorKind::BadFrameVersion,
        ErrorKind::UnknownApiKey,
        ErrorKind::UnsupportedVersion,
        ErrorKind::InvalidLength,
        ErrorKind::InvalidVarint,
        ErrorKind::InvalidUtf8,
        ErrorKind::InvalidKey,
        ErrorKind::InvalidUuid,
        ErrorKind::InvalidArgument,
        ErrorKind::InvalidJson,
        ErrorKind::InvalidRecord,
        ErrorKind::NotFound,
        ErrorKind::NotInitialized,
        ErrorKind::InvalidState,
        ErrorKind::Corrupt,
        ErrorKind::LimitExceeded,
        ErrorKind::InvalidLayout,
        ErrorKind::LayoutMismatch,
        ErrorKind::Internal,
    ];

    /// The stable numeric code. 0 means "no error" in the C ABI and is never a kind.
    pub const fn code(self) -> u32 {
        match self {
            ErrorKind::Truncated => 1,
            ErrorKind::TrailingBytes => 2,
            ErrorKind::BadFrameVersion => 3,
            ErrorKind::UnknownApiKey => 4,
            ErrorKind::UnsupportedVersion => 5,
            ErrorKind::InvalidLength => 6,
            ErrorKind::InvalidVarint => 7,
            ErrorKind::InvalidUtf8 => 8,
            ErrorKind::InvalidKey => 9,
            ErrorKind::InvalidUuid => 10,
            ErrorKind::InvalidArgument => 11,
            ErrorKind::InvalidJson => 12,
            ErrorKind::InvalidRecord => 13,
            ErrorKind::NotFound => 14,
            ErrorKind::NotInitialized => 15,
            ErrorKind::InvalidState => 16,
            ErrorKind::Internal => 99,
            ErrorKind::Corrupt => 17,
            ErrorKind::LimitExceeded => 18,
            ErrorKind::InvalidLayout => 19,
            ErrorKind::LayoutMismatch => 20,
        }
    }

    /// The kind with this code, if any.
    pub fn from_code(code: u32) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The kind of fault a Kafka exception text names (the `error` and `causes` of Kafka's
    /// conformance vectors), so that rlmeta's error can be checked against Kafka's. `None` when
    /// the text names no fault rlmeta distinguishes.
    pub fn from_kafka_message(text: &str) -> Option<ErrorKind> {
        let has = |needle: &str| text.contains(needle);
        let kind = if has("Value for frame version was too large")
            || has("frame version") && !has("Error while reading frame version")
        {
            ErrorKind::BadFrameVersion
        } else if has("Varint is too long") {
            ErrorKind::InvalidVarint
        } else if has("Value for type was too large") || has("Unknown metadata id") {
            ErrorKind::UnknownApiKey
        } else if has("Value for version was too large")
            || has("Can't read version")
            || has("is not valid for version")
        {
            ErrorKind::UnsupportedVersion
        } else if has("of garbage after") {
            ErrorKind::TrailingBytes
        } else if has("BufferUnderflowException")
            || has("Error reading byte array")
            || has("Tried to allocate a collection")
            || has("tagged fields, but there are only")
        {
            ErrorKind::Truncated
        } else if has("serialized as null")
            || has("had invalid length")
            || has("NegativeArraySizeException")
            || has("exceeds the maximum allowed count")
            || has("Invalid negative number of tagged fields")
        {
            ErrorKind::InvalidLength
        } else {
            return None;
        };
        Some(kind)
    }

    /// One line for people: what the kind means (the doc comment every binding's constant or
    /// class of this kind carries; generated, see `tools/tables`).
    pub const fn summary(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "The input ended before a field was complete.",
            ErrorKind::TrailingBytes => "A value decoded completely but bytes remain after it.",
            ErrorKind::BadFrameVersion => "The serde frame version is not 1.",
            ErrorKind::UnknownApiKey => "The api key names no `__remote_log_metadata` record type.",
            ErrorKind::UnsupportedVersion => "A version this schema cannot read or write.",
            ErrorKind::InvalidLength => "A length or count that cannot be right.",
            ErrorKind::InvalidVarint => {
                "An unsigned varint longer than 5 bytes, or a frame header number above 0x7fff."
            }
            ErrorKind::InvalidUtf8 => "A string (a field, or a text argument) is not UTF-8.",
            ErrorKind::InvalidKey => "A KIP-1266 record key that does not parse.",
            ErrorKind::InvalidUuid => "A uuid string that is not Kafka's 22-character base64 form.",
            ErrorKind::InvalidArgument => {
                "An argument outside its domain, including a missing (null) argument."
            }
            ErrorKind::InvalidJson => "A record in JSON form that is malformed or misses a field.",
            ErrorKind::InvalidRecord => {
                "A value that decodes but that Kafka's object model rejects."
            }
            ErrorKind::NotFound => "A query about a partition or segment the store does not hold.",
            ErrorKind::NotInitialized => {
                "A query about a partition whose replay has not caught up yet."
            }
            ErrorKind::InvalidState => "An operation the current state forbids.",
            ErrorKind::Internal => {
                "A bug in rlmeta (a panic, caught at the boundary). Never expected."
            }
            ErrorKind::Corrupt => {
                "Bytes that fail an integrity check (a record batch CRC, compressed data)."
            }
            ErrorKind::LimitExceeded => {
                "Input that would make rlmeta use more memory than the caller allowed."
            }
            ErrorKind::InvalidLayout => "A layout of remote object keys that does not parse.",
            ErrorKind::LayoutMismatch => {
                "A layout that matches none of the objects a listing holds."
            }
        }
    }

    /// A stable snake_case name, used by bindings for exception and class names.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::TrailingBytes => "trailing_bytes",
            ErrorKind::BadFrameVersion => "bad_frame_version",
            ErrorKind::UnknownApiKey => "unknown_api_key",
            ErrorKind::UnsupportedVersion => "unsupported_version",
            ErrorKind::InvalidLength => "invalid_length",
            ErrorKind::InvalidVarint => "invalid_varint",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::InvalidKey => "invalid_key",
            ErrorKind::InvalidUuid => "invalid_uuid",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::InvalidRecord => "invalid_record",
            ErrorKind::NotFound => "not_found",
            ErrorKind::NotInitialized => "not_initialized",
            ErrorKind::InvalidState => "invalid_state",
            ErrorKind::Internal => "internal",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::InvalidLayout => "invalid_layout",
            ErrorKind::LayoutMismatch => "layout_mismatch",
        }
    }
}

/// An error: its kind, where it happened (byte offset into the input and the field being read,
/// when known) and a message for people. One pointer wide, so that a `Result` of a small value
/// comes back in registers (every field the decoders read is such a `Result`).
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    offset: Option<usize>,
    field: Option<String>,
    message: String,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("offset", &self.0.offset)
            .field("field", &self.0.field)
            .field("message", &self.0.message)
            .finish()
    }
}

impl Error {
    /// An error with no position.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            offset: None,
            field: None,
            message: message.into(),
        }))
    }

    /// An error at a byte offset of the input, while reading or writing `field`.
    pub fn at(kind: ErrorKind, offset: usize, field: &str, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            offset: Some(offset),
            field: Some(field.to_owned()),
            message: message.into(),
        }))
    }

    /// An error about a named field, with no byte position (encoding, JSON, arguments).
    pub fn field(kind: ErrorKind, field: &str, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            offset: None,
            field: Some(field.to_owned()),
            message: message.into(),
        }))
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    pub fn code(&self) -> u32 {
        self.0.kind.code()
    }

    /// Byte offset into the input where the fault was found, when the input was bytes.
    pub fn offset(&self) -> Option<usize> {
        self.0.offset
    }

    /// The schema field (dotted path, e.g. `remoteLogSegmentId.topicIdPartition.name`) involved.
    pub fn field_name(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// The message alone, without kind or position.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// An error at a byte offset that belongs to no single field (trailing bytes, a key).
    pub fn at_offset(kind: ErrorKind, offset: usize, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            offset: Some(offset),
            field: None,
            message: message.into(),
        }))
    }

    /// The same error with a field path prefix (used when a nested value fails, or by a caller
    /// that knows which argument the failing value came from).
    pub fn in_field(mut self, parent: &str) -> Error {
        self.0.field = Some(match self.0.field.take() {
            Some(f) if !f.is_empty() => format!("{parent}.{f}"),
            _ => parent.to_owned(),
        });
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.0.kind.name(), self.0.kind.code())?;
        match (&self.0.field, self.0.offset) {
            (Some(field), Some(off)) => write!(f, " at byte {off}, field {field}")?,
            (None, Some(off)) => write!(f, " at byte {off}")?,
            (Some(field), None) => write!(f, " in field {field}")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.0.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for k in ErrorKind::ALL {
            assert!(k.code() != 0);
            assert!(seen.insert(k.code()), "code {} reused", k.code());
            assert_eq!(ErrorKind::from_code(k.code()), Some(k));
        }
        assert_eq!(ErrorKind::from_code(0), None);
    }

    #[test]
    fn display_names_kind_place_and_field() {
        let e = Error::at(
            ErrorKind::Truncated,
            17,
            "startOffset",
            "needs 8 bytes, 3 left",
        );
        assert_eq!(
            e.to_string(),
            "truncated (code 1) at byte 17, field startOffset: needs 8 bytes, 3 left"
        );
    }
}
