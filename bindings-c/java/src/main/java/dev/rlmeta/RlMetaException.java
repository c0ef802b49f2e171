package dev.rlmeta;

/**
 * An error of the rlmeta core: its stable code (the same number in every rlmeta binding), the
 * kind's name, and where it was found. Each kind has its own subclass (e.g.
 * {@link RlMetaException.Truncated}), whose {@code CODE} is that kind's code.
 *
 * <p>{@link #getMessage()} is the whole description, e.g.
 * {@code "truncated (code 1) at byte 45, field startOffset: needs 8 byte(s), only 3 left"};
 * {@link #getDetail()} is the last part alone.
 */
public class RlMetaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int errorCode;
    private final String kind;
    private final String detail;
    private final long offset;
    private final String field;

    /** What the native side reports about an error. */
    static final class Details {
        final int code;
        final String kind;
        final String description;
        final String detail;
        final long offset;
        final String field;

        Details(int code, String kind, String description, String detail, long offset, String field) {
            this.code = code;
            this.kind = kind;
            this.description = description;
            this.detail = detail;
            this.offset = offset;
            this.field = field;
        }

        int code() { return code; }
        String kind() { return kind; }
        String description() { return description; }
        String detail() { return detail; }
        long offset() { return offset; }
        String field() { return field; }
    }

    RlMetaException(Details d) {
        super(d.description());
        this.errorCode = d.code();
        this.kind = d.kind();
        this.detail = d.detail();
        this.offset = d.offset();
        this.field = d.field();
    }

    /** The error's stable code. */
    public int getErrorCode() {
        return errorCode;
    }

    /** The stable name of the error's kind, e.g. {@code "truncated"}. */
    public String getKind() {
        return kind;
    }

    /** The message alone (what was wrong), without kind or position. */
    public String getDetail() {
        return detail;
    }

    /** The byte offset into the input where the fault was found, or -1 when none is known. */
    public long getOffset() {
        return offset;
    }

    /** The schema field (dotted path) or argument involved, or null when none is known. */
    public String getField() {
        return field;
    }

    /** The exception of an error code: its kind's subclass, or this class for an unknown code. Called from native code. */
    static RlMetaException create(int code, String kind, String description, String detail, long offset, String field) {
        Details d = new Details(code, kind, description, detail, offset, field);
        switch (code) {
            case Truncated.CODE: return new Truncated(d);
            case TrailingBytes.CODE: return new TrailingBytes(d);
            case BadFrameVersion.CODE: return new BadFrameVersion(d);
            case UnknownApiKey.CODE: return new UnknownApiKey(d);
            case UnsupportedVersion.CODE: return new UnsupportedVersion(d);
            case InvalidLength.CODE: return new InvalidLength(d);
            case InvalidVarint.CODE: return new InvalidVarint(d);
            case InvalidUtf8.CODE: return new InvalidUtf8(d);
            case InvalidKey.CODE: return new InvalidKey(d);
            case InvalidUuid.CODE: return new InvalidUuid(d);
            case InvalidArgument.CODE: return new InvalidArgument(d);
            case InvalidJson.CODE: return new InvalidJson(d);
            case InvalidRecord.CODE: return new InvalidRecord(d);
            case NotFound.CODE: return new NotFound(d);
            case NotInitialized.CODE: return new NotInitialized(d);
            case InvalidState.CODE: return new InvalidState(d);
            case Corrupt.CODE: return new Corrupt(d);
            case LimitExceeded.CODE: return new LimitExceeded(d);
            case InvalidLayout.CODE: return new InvalidLayout(d);
            case LayoutMismatch.CODE: return new LayoutMismatch(d);
            case Internal.CODE: return new Internal(d);
            default: return new RlMetaException(d);
        }
    }

    /** The input ended before a field was complete. */
    public static final class Truncated extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 1;

        Truncated(Details d) {
            super(d);
        }
    }

    /** A value decoded completely but bytes remain after it. */
    public static final class TrailingBytes extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 2;

        TrailingBytes(Details d) {
            super(d);
        }
    }

    /** The serde frame version is not 1. */
    public static final class BadFrameVersion extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 3;

        BadFrameVersion(Details d) {
            super(d);
        }
    }

    /** The api key names no {@code __remote_log_metadata} record type. */
    public static final class UnknownApiKey extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 4;

        UnknownApiKey(Details d) {
            super(d);
        }
    }

    /** A version this schema cannot read or write. */
    public static final class UnsupportedVersion extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 5;

        UnsupportedVersion(Details d) {
            super(d);
        }
    }

    /** A length or count that cannot be right. */
    public static final class InvalidLength extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 6;

        InvalidLength(Details d) {
            super(d);
        }
    }

    /** An unsigned varint longer than 5 bytes, or a frame header number above 0x7fff. */
    public static final class InvalidVarint extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 7;

        InvalidVarint(Details d) {
            super(d);
        }
    }

    /** A string is not UTF-8. */
    public static final class InvalidUtf8 extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 8;

        InvalidUtf8(Details d) {
            super(d);
        }
    }

    /** A KIP-1266 record key that does not parse. */
    public static final class InvalidKey extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 9;

        InvalidKey(Details d) {
            super(d);
        }
    }

    /** A uuid string that is not Kafka's 22-character base64 form. */
    public static final class InvalidUuid extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 10;

        InvalidUuid(Details d) {
            super(d);
        }
    }

    /** An argument outside its domain. */
    public static final class InvalidArgument extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 11;

        InvalidArgument(Details d) {
            super(d);
        }
    }

    /** A record in JSON form that is malformed or misses a field. */
    public static final class InvalidJson extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 12;

        InvalidJson(Details d) {
            super(d);
        }
    }

    /** A value that decodes but that Kafka's object model rejects. */
    public static final class InvalidRecord extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 13;

        InvalidRecord(Details d) {
            super(d);
        }
    }

    /** A query about a partition or segment the store does not hold. */
    public static final class NotFound extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 14;

        NotFound(Details d) {
            super(d);
        }
    }

    /** A query about a partition whose replay has not caught up yet. */
    public static final class NotInitialized extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 15;

        NotInitialized(Details d) {
            super(d);
        }
    }

    /** An operation the current state forbids. */
    public static final class InvalidState extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 16;

        InvalidState(Details d) {
            super(d);
        }
    }

    /** Bytes that fail an integrity check (a record batch CRC, compressed data). */
    public static final class Corrupt extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 17;

        Corrupt(Details d) {
            super(d);
        }
    }

    /** Input that would make rlmeta use more memory than the caller allowed. */
    public static final class LimitExceeded extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 18;

        LimitExceeded(Details d) {
            super(d);
        }
    }

    /** A layout of remote object keys that does not parse. */
    public static final class InvalidLayout extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 19;

        InvalidLayout(Details d) {
            super(d);
        }
    }

    /** A layout that matches none of the objects a listing holds. */
    public static final class LayoutMismatch extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 20;

        LayoutMismatch(Details d) {
            super(d);
        }
    }

    /** A bug in rlmeta (a panic in the native core). Never expected. */
    public static final class Internal extends RlMetaException {
        private static final long serialVersionUID = 1L;
        /** The code of this kind. */
        public static final int CODE = 99;

        Internal(Details d) {
            super(d);
        }
    }
}
