package dev.rlmeta.e2e;

import org.apache.kafka.tools.api.Decoder;

/**
 * A key and value decoder for Kafka's own DumpLogSegments (--key-decoder-class,
 * --value-decoder-class): prints the bytes Kafka's record reader handed it as lowercase hex, so a
 * test can compare every byte of every key and value with what Kafka read from the file. It only
 * formats; it never parses. Used by tests/e2e/dump-fixtures.sh.
 */
public final class HexDecoder implements Decoder<String> {
    private static final char[] DIGITS = "0123456789abcdef".toCharArray();

    @Override
    public String fromBytes(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = DIGITS[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = DIGITS[bytes[i] & 0xf];
        }
        return "hex:" + new String(out);
    }
}
