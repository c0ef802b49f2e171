package dev.rlmeta;

import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A listing's values as one native call returns them: a few arrays (chunks), each holding values
 * back to back, each value after its length (4 bytes, big-endian), in the listing's order, none
 * split across chunks. Owns the reading of that layout and nothing else: it copies a value out only
 * when {@link #next} asks for it, so a caller that stops early never pays for the rest (the broker
 * plugin turns each into Kafka's object only then).
 *
 * <p>A snapshot: the store's changes after the call that made it do not show. Not thread-safe (an
 * iterator, used by one caller).
 */
public final class PackedValues implements Iterator<byte[]> {
    private final byte[][] chunks;
    private int chunk;
    private int at;

    PackedValues(byte[][] chunks) {
        this.chunks = chunks;
    }

    @Override
    public boolean hasNext() {
        while (chunk < chunks.length && at >= chunks[chunk].length) {
            chunk++;
            at = 0;
        }
        return chunk < chunks.length;
    }

    /** The next value; {@link NoSuchElementException} after the last, {@link IllegalStateException} on a torn layout. */
    @Override
    public byte[] next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        byte[] packed = chunks[chunk];
        if (packed.length - at < 4) {
            throw new IllegalStateException("a packed listing ends inside a length, at byte " + at + " of chunk " + chunk);
        }
        int len = (packed[at] & 0xff) << 24 | (packed[at + 1] & 0xff) << 16 | (packed[at + 2] & 0xff) << 8
                | (packed[at + 3] & 0xff);
        int from = at + 4;
        if (len < 0 || len > packed.length - from) {
            throw new IllegalStateException("a packed listing's value of " + len + " bytes overruns its chunk, at byte "
                    + at + " of chunk " + chunk);
        }
        at = from + len;
        return Arrays.copyOfRange(packed, from, at);
    }
}
