package dev.rlmeta.kafka;

/**
 * The bootstrap's cost, until every partition held at the first assignment is initialized: polls,
 * records, time in poll() and in applying them, and of that in the core's store.apply (the JNI
 * call). Written by the consumer thread only, read by others once it is done.
 *
 * <p>It never decides when the bootstrap ends (the consumer's readiness does) and never logs.
 */
final class BootstrapStats {
    /** The first polls are each marked on the start-up timeline. */
    private static final int DETAILED_POLLS = 12;
    private volatile boolean done;
    private int polls;
    private long records;
    private long pollNanos;
    private long applyNanos;
    private long coreNanos; // of which in the core's store.apply (the JNI call)

    /** Whether the bootstrap is over (then nothing is counted any more). */
    boolean done() {
        return done;
    }

    void finish() {
        done = true;
    }

    /** A poll of `count` records that took t0..t1 in poll(), and t1..`applied` applying them. */
    void poll(int count, long t0, long t1, long applied, StartupTimeline timeline) {
        if (done) {
            return;
        }
        polls++;
        records += count;
        pollNanos += t1 - t0;
        applyNanos += applied - t1;
        if (polls <= DETAILED_POLLS) {
            timeline.mark(String.format("poll %d: %d records in %.1f ms", polls, count, (t1 - t0) / 1e6));
        }
    }

    /** Time in one call into the core's store.apply. */
    void core(long nanos) {
        if (!done) {
            coreNanos += nanos;
        }
    }

    /** The bootstrap's polls, records and time (poll vs the core's apply), once it is done; else null. */
    String stats() {
        if (!done) {
            return null;
        }
        return String.format("bootstrap: %d poll(s), %d record(s), %.1f ms in poll(), %.1f ms applying (%.1f ms in the "
                + "core's store.apply)", polls, records, pollNanos / 1e6, applyNanos / 1e6, coreNanos / 1e6);
    }
}
