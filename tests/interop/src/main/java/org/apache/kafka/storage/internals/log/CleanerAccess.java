package org.apache.kafka.storage.internals.log;

import java.io.IOException;
import java.util.Optional;

/**
 * Test-only bridge for rlmeta's cleaner differential (dev.rlmeta.interop.cleaner): Kafka 4.4.0's
 * {@code LogCleanerManager.cleanableOffsets}, which decides the dirty range a cleaning round may
 * take (checkpoint, active segment, last stable offset, min.compaction.lag.ms), is package-private,
 * so this class lives in its package (inside tests/interop, not in Kafka's jar) and only forwards
 * to it. Nothing here changes what Kafka computes.
 */
public final class CleanerAccess {
    private CleanerAccess() {}

    /** {@code {firstDirtyOffset, firstUncleanableDirtyOffset}} as the broker's cleaner manager computes them. */
    public static long[] cleanableOffsets(UnifiedLog log, Optional<Long> lastCleanOffset, long now) throws IOException {
        LogCleanerManager.OffsetsToClean o = LogCleanerManager.cleanableOffsets(log, lastCleanOffset, now);
        return new long[] {o.firstDirtyOffset(), o.firstUncleanableDirtyOffset()};
    }
}
