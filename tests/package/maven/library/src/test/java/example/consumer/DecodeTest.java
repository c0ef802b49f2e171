package example.consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rlmeta.RlMeta;
import dev.rlmeta.RlMetaException;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** A user's test of dev.rlmeta:rlmeta as Maven resolved it: the jar, its native library, a decode. */
class DecodeTest {
    private static final String VERSION = System.getProperty("rlmeta.version.expected");

    @Test
    void theResolvedJarLoadsItsOwnNativeLibrary() {
        assertEquals(VERSION, RlMeta.version());
        URL jar = RlMeta.class.getProtectionDomain().getCodeSource().getLocation();
        assertTrue(jar.getPath().endsWith("/dev/rlmeta/rlmeta/" + VERSION + "/rlmeta-" + VERSION + ".jar"), jar.toString());
        URL lib = RlMeta.class.getResource("/dev/rlmeta/native/linux-x86_64/librlmeta_c-" + VERSION + ".so");
        assertNotNull(lib, "the native library inside the jar");
        assertEquals("jar", lib.getProtocol());
    }

    /** Every version-1 segment value of tests/vectors/v1.json: its startOffset, and back to the same bytes. */
    @Test
    void everyV1SegmentValueDecodesAndEncodesBack() throws IOException {
        String text = Files.readString(Path.of(System.getProperty("rlmeta.vectors"), "v1.json"));
        // each case, at its indentation (records hold "hex" too, in unknown tagged fields):
        // "apiKey": N, "version": .., "record": {..}, "hex": ".."
        Matcher c = Pattern.compile("^ {6}\"apiKey\": (\\d+),(.*?)^ {6}\"hex\": \"([0-9a-f]*)\"", Pattern.DOTALL | Pattern.MULTILINE)
            .matcher(text);
        int n = 0;
        while (c.find()) {
            if (!c.group(1).equals("0")) continue;
            Matcher start = Pattern.compile("\"startOffset\": (-?\\d+),").matcher(c.group(2));
            assertTrue(start.find(), c.group(2));
            byte[] value = HexFormat.of().parseHex(c.group(3));
            String json = RlMeta.decodeValueJson(value);
            assertTrue(json.contains("\"startOffset\":" + start.group(1) + ","), json);
            assertArrayEquals(value, RlMeta.encodeValueJson(json));
            n++;
        }
        assertTrue(n >= 5, "only " + n + " segment values in v1.json");
    }

    @Test
    void aTruncatedValueThrowsTruncatedWithItsCode() {
        RlMetaException.Truncated e = assertThrows(RlMetaException.Truncated.class, () -> RlMeta.decodeValueJson(new byte[] {1, 0}));
        assertEquals(RlMetaException.Truncated.CODE, e.getErrorCode());
    }
}
