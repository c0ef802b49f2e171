// Types of errors.mjs (hand-written; tests/api.test.mjs checks they name the same classes).

/** The snake_case name of an rlmeta error kind. */
export type ErrorKindName =
  | 'truncated' | 'trailing_bytes' | 'bad_frame_version' | 'unknown_api_key' | 'unsupported_version'
  | 'invalid_length' | 'invalid_varint' | 'invalid_utf8' | 'invalid_key' | 'invalid_uuid'
  | 'invalid_argument' | 'invalid_json' | 'invalid_record' | 'not_found' | 'not_initialized'
  | 'invalid_state' | 'corrupt' | 'limit_exceeded' | 'invalid_layout'
  | 'layout_mismatch' | 'internal';

export interface RlmetaErrorDetails {
  code?: number;
  kind?: string;
  offset?: number;
  field?: string;
  detail?: string;
  cause?: unknown;
}

/**
 * An rlmeta error. `code` and `kind` name the kind (the same numbers in every binding, see
 * `errorCodes()`), `offset` the byte of the input where it was found, `field` the schema field,
 * `detail` the bare reason; `message` says all of it.
 */
export class RlmetaError extends Error {
  constructor(message: string, details?: RlmetaErrorDetails);
  readonly code: number;
  readonly kind: ErrorKindName | (string & {});
  readonly offset: number | undefined;
  readonly field: string | undefined;
  readonly detail: string;
}

export class TruncatedError extends RlmetaError { static readonly kind: 'truncated'; }
export class TrailingBytesError extends RlmetaError { static readonly kind: 'trailing_bytes'; }
export class BadFrameVersionError extends RlmetaError { static readonly kind: 'bad_frame_version'; }
export class UnknownApiKeyError extends RlmetaError { static readonly kind: 'unknown_api_key'; }
export class UnsupportedVersionError extends RlmetaError { static readonly kind: 'unsupported_version'; }
export class InvalidLengthError extends RlmetaError { static readonly kind: 'invalid_length'; }
export class InvalidVarintError extends RlmetaError { static readonly kind: 'invalid_varint'; }
export class InvalidUtf8Error extends RlmetaError { static readonly kind: 'invalid_utf8'; }
export class InvalidKeyError extends RlmetaError { static readonly kind: 'invalid_key'; }
export class InvalidUuidError extends RlmetaError { static readonly kind: 'invalid_uuid'; }
export class InvalidArgumentError extends RlmetaError { static readonly kind: 'invalid_argument'; }
export class InvalidJsonError extends RlmetaError { static readonly kind: 'invalid_json'; }
export class InvalidRecordError extends RlmetaError { static readonly kind: 'invalid_record'; }
export class NotFoundError extends RlmetaError { static readonly kind: 'not_found'; }
export class NotInitializedError extends RlmetaError { static readonly kind: 'not_initialized'; }
export class InvalidStateError extends RlmetaError { static readonly kind: 'invalid_state'; }
export class CorruptError extends RlmetaError { static readonly kind: 'corrupt'; }
export class LimitExceededError extends RlmetaError { static readonly kind: 'limit_exceeded'; }
export class InvalidLayoutError extends RlmetaError { static readonly kind: 'invalid_layout'; }
export class LayoutMismatchError extends RlmetaError { static readonly kind: 'layout_mismatch'; }
/** A bug in rlmeta: the WebAssembly module trapped (a Rust panic, or memory exhausted). */
export class InternalError extends RlmetaError { static readonly kind: 'internal'; }

/** Every subclass, keyed by its kind's name. */
export declare const errorClasses: Readonly<Record<ErrorKindName, typeof RlmetaError>>;
