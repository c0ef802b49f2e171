package dev.rlmeta.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimitedLogTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void theFirstLineOfAKeyLogsThenOneAWindowWithTheCountSuppressed() {
        AtomicLong now = new AtomicLong(1_000 * SECOND);
        RateLimitedLog log = new RateLimitedLog(60_000, now::get);
        assertEquals("", log.admit("refused a-0"));
        for (int i = 0; i < 59; i++) {
            now.addAndGet(SECOND);
            assertNull(log.admit("refused a-0"), "second " + i);
        }
        assertEquals("", log.admit("refused b-0"), "another key is not held back");
        now.addAndGet(SECOND);
        assertEquals(" (59 similar suppressed in the last 60 s)", log.admit("refused a-0"));
        now.addAndGet(120 * SECOND);
        assertEquals("", log.admit("refused a-0"), "nothing suppressed since: no count");
        log.forget("refused a-0");
        assertEquals(1, log.keys());
    }
}
