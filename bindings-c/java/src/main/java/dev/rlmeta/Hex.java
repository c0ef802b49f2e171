package dev.rlmeta;

/** Lower-case hex of bytes (java.util.HexFormat is Java 17; the library is compiled for Java 11). */
final class Hex {
    private static final char[] DIGITS = "0123456789abcdef".toCharArray();

    private Hex() {}

    /** The hex of b[from..to). */
    static String of(byte[] b, int from, int to) {
        StringBuilder sb = new StringBuilder((to - from) * 2);
        for (int i = from; i < to; i++) {
            sb.append(DIGITS[(b[i] >> 4) & 0xf]).append(DIGITS[b[i] & 0xf]);
        }
        return sb.toString();
    }
}
