package dev.rlmeta;

import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A listing's values as one native call returns them: one array, each value after its length (4
 * bytes, big-endian), in the listing's order. Owns the reading of that layout and nothing else: it
 * copies a value out only when {@link #next} asks for it, so a caller that stops early never pays
 * for the rest (the broker plugin turns each into Kafka's object only then).
 *
 * <p>A snapshot: the store's changes after the call that made it do not show. Not thread-safe (an
 * iterator, used by one caller).
 */
public final class PackedValues implements Iterator<byte[]> {
    private final byte[] packed;
    private int at;

    PackedValues(byte[] packed) {
        this.packed = packed;
    }

    @Override
    public boolean hasNext() {
        return at < packed.length;
    }

    /** The next value; {@link NoSuchElementException} after the last, {@link IllegalStateException} on a torn layout. */
    @Override
    public byte[] next() {
        if (at >= packed.length) {
            throw new NoSuchElementException();
        }
        if (packed.length - at < 4) {
            throw new IllegalStateException("a packed listing ends inside a length, at byte " + at);
        }
        int len = (packed[at] & 0xff) << 24 | (packed[at + 1] & 0xff) << 16 | (packed[at + 2] & 0xff) << 8
                | (packed[at + 3] & 0xff);
        int from = at + 4;
        if (len < 0 || len > packed.length - from) {
            throw new IllegalStateException("a packed listing's value of " + len + " bytes overruns it, at byte " + at);
        }
        at = from + len;
        return Arrays.copyOfRange(packed, from, at);
    }
}
