package dev.rlmeta.kafka;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Which log lines of a repeating kind are written: the first of a key at once, then at most one a
 * window, that one saying how many of its kind were suppressed since the last. A broker that
 * refuses a write every second, or reads tombstones in every poll, writes one line a minute with a
 * count, not sixty. Owns only the decision and the suffix; the caller logs. Thread-safe.
 */
final class RateLimitedLog {
    private final long windowNanos;
    private final LongSupplier clock;
    private final Map<String, long[]> keys = new ConcurrentHashMap<>(); // key -> {last logged at, suppressed since}

    RateLimitedLog(long windowMillis) {
        this(windowMillis, System::nanoTime);
    }

    RateLimitedLog(long windowMillis, LongSupplier nanoClock) {
        this.windowNanos = windowMillis * 1_000_000L;
        this.clock = nanoClock;
    }

    /**
     * Null when a line of this key is to be suppressed (counted); else the suffix to append to the
     * line written now: empty, or " (N similar suppressed in the last S s)".
     */
    String admit(String key) {
        long now = clock.getAsLong();
        long[] s = keys.computeIfAbsent(key, k -> new long[] {now - windowNanos, 0});
        synchronized (s) {
            if (now - s[0] < windowNanos) {
                s[1]++;
                return null;
            }
            long suppressed = s[1];
            long since = (now - s[0]) / 1_000_000_000L;
            s[0] = now;
            s[1] = 0;
            return suppressed == 0 ? "" : " (" + suppressed + " similar suppressed in the last " + since + " s)";
        }
    }

    /** Forgets a key (its partition is no longer held). */
    void forget(String key) {
        keys.remove(key);
    }

    int keys() {
        return keys.size();
    }
}
