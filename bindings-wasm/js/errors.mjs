// The errors rlmeta throws to JavaScript: RlmetaError and one subclass per core error kind.
//
// Owns: the class of each kind, by the kind's snake_case name. Never: the numeric codes (they come
// from the core with every error, and from errorCodes()). A kind the core adds later still arrives
// as an RlmetaError with the right .code and .kind, and tests/api.test.mjs fails until its class
// is added here and in errors.d.mts.

/** 'TruncatedError' for the kind 'truncated': the class names, spelled out from the kinds, since
 * bundlers' minifiers rename classes (a production build would say `name: 'Ie'`). */
const errorName = (kind) => (kind === undefined ? 'RlmetaError' : `${kind.replace(/(?:^|_)([a-z0-9])/g, (_, c) => c.toUpperCase())}Error`);

/** An rlmeta error: `.code` and `.kind` name the kind (the same numbers in every binding), `.offset`
 * the byte of the input where it was found, `.field` the schema field, `.detail` the bare reason;
 * `.message` says all of it. */
export class RlmetaError extends Error {
  constructor(message, { code, kind, offset, field, detail, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = errorName(new.target.kind);
    this.code = code;
    this.kind = kind;
    this.offset = offset;
    this.field = field;
    this.detail = detail ?? message;
  }
}

export class TruncatedError extends RlmetaError { static kind = 'truncated'; }
export class TrailingBytesError extends RlmetaError { static kind = 'trailing_bytes'; }
export class BadFrameVersionError extends RlmetaError { static kind = 'bad_frame_version'; }
export class UnknownApiKeyError extends RlmetaError { static kind = 'unknown_api_key'; }
export class UnsupportedVersionError extends RlmetaError { static kind = 'unsupported_version'; }
export class InvalidLengthError extends RlmetaError { static kind = 'invalid_length'; }
export class InvalidVarintError extends RlmetaError { static kind = 'invalid_varint'; }
export class InvalidUtf8Error extends RlmetaError { static kind = 'invalid_utf8'; }
export class InvalidKeyError extends RlmetaError { static kind = 'invalid_key'; }
export class InvalidUuidError extends RlmetaError { static kind = 'invalid_uuid'; }
export class InvalidArgumentError extends RlmetaError { static kind = 'invalid_argument'; }
export class InvalidJsonError extends RlmetaError { static kind = 'invalid_json'; }
export class InvalidRecordError extends RlmetaError { static kind = 'invalid_record'; }
export class NotFoundError extends RlmetaError { static kind = 'not_found'; }
export class NotInitializedError extends RlmetaError { static kind = 'not_initialized'; }
export class InvalidStateError extends RlmetaError { static kind = 'invalid_state'; }
export class CorruptError extends RlmetaError { static kind = 'corrupt'; }
export class LimitExceededError extends RlmetaError { static kind = 'limit_exceeded'; }
export class InvalidLayoutError extends RlmetaError { static kind = 'invalid_layout'; }
export class LayoutMismatchError extends RlmetaError { static kind = 'layout_mismatch'; }
/** A bug in rlmeta: the WebAssembly module trapped (a Rust panic, or memory exhausted). */
export class InternalError extends RlmetaError { static kind = 'internal'; }

/** Every subclass, keyed by its kind's name. */
export const errorClasses = Object.freeze(Object.fromEntries(
  [
    TruncatedError, TrailingBytesError, BadFrameVersionError, UnknownApiKeyError, UnsupportedVersionError,
    InvalidLengthError, InvalidVarintError, InvalidUtf8Error, InvalidKeyError, InvalidUuidError,
    InvalidArgumentError, InvalidJsonError, InvalidRecordError, NotFoundError, NotInitializedError,
    InvalidStateError, CorruptError, LimitExceededError, InvalidLayoutError, LayoutMismatchError, InternalError,
  ].map((c) => [c.kind, c]),
));
