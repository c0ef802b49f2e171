package dev.rlmeta;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The replayed state of one {@code __remote_log_metadata} partition, held natively: Kafka's
 * {@code RemotePartitionMetadataStore} fed as its consumer feeds it, with Kafka's queries, and the
 * write planner.
 *
 * <p>Topic ids cross as two longs (Kafka's {@code Uuid} most and least significant bits). Segment
 * metadata crosses as the bytes Kafka 4.4.0's {@code RemoteLogMetadataSerde} writes for a
 * {@code RemoteLogSegmentMetadata} in the segment's current state (a version-0
 * {@code RemoteLogSegmentMetadataRecord} value); turn it into Kafka's object with
 * {@code RemoteLogMetadataSerde.deserialize}.
 *
 * <p>Safe for concurrent use: applies are serialized, queries run in parallel. Every native failure
 * is an {@link RlMetaException} subclass carrying the core's code; a null array or string argument
 * throws {@link NullPointerException}; a call after {@link #close} throws
 * {@link IllegalStateException}. The native memory is released by {@link #close}, or by a
 * {@link Cleaner} once the object is unreachable.
 */
public final class MetadataStore implements AutoCloseable {
    static {
        NativeLoader.load();
    }

    /** {@link #highestOffsetForEpoch} when the epoch has no offset. */
    public static final long NO_OFFSET = Long.MIN_VALUE;

    private static final Cleaner CLEANER = Cleaner.create();

    /** The system property that enables {@link #panicForTest} ("true"); never set in production. */
    public static final String TEST_HOOKS_PROPERTY = "rlmeta.test.hooks";

    /** Native stores allocated and not yet freed, in this class loader (for leak checks). */
    private static final java.util.concurrent.atomic.AtomicLong LIVE = new java.util.concurrent.atomic.AtomicLong();

    /** The native handle, freed once (by close or by the cleaner). */
    private static final class Handle implements Runnable {
        private long pointer;

        Handle(long pointer) {
            this.pointer = pointer;
        }

        @Override
        public synchronized void run() {
            long p = pointer;
            pointer = 0;
            if (p != 0) {
                nativeFree(p);
                LIVE.decrementAndGet();
            }
        }
    }

    private final Handle handle;
    private final Cleaner.Cleanable cleanable;
    /** Calls hold it shared; close holds it exclusively, so no call runs on a freed handle. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile boolean closed;

    /** An empty store that keeps every user partition a record names (the whole topic, as the tools read it). */
    public MetadataStore() {
        this(false);
    }

    /**
     * An empty store. {@code held}: it keeps only the user partitions loaded into it, as a broker's
     * consumer does (a record of any other partition is skipped, outcome {@link Outcome#NOT_HELD},
     * and leaves no trace); {@link #loadPartition} then says which partitions need their metadata
     * partition replayed from its beginning.
     */
    public MetadataStore(boolean held) {
        handle = new Handle(nativeNew(held));
        LIVE.incrementAndGet();
        cleanable = CLEANER.register(this, handle);
    }

    /** How many native stores are allocated and not yet freed (by close or the cleaner). */
    public static long liveStores() {
        return LIVE.get();
    }

    /**
     * Test-only fault injection: panics inside the native store while it holds its write lock,
     * as a bug in the core would, which leaves the store poisoned (every later call throws
     * {@link RlMetaException.Internal}). Refused with {@link UnsupportedOperationException} unless
     * the JVM runs with {@code -Drlmeta.test.hooks=true}, so production code cannot reach it.
     */
    public void panicForTest() {
        if (!Boolean.getBoolean(TEST_HOOKS_PROPERTY)) {
            throw new UnsupportedOperationException("MetadataStore.panicForTest needs -D" + TEST_HOOKS_PROPERTY + "=true");
        }
        long h = enter();
        try {
            nativePanicForTest(h);
        } finally {
            exit();
        }
    }

    /** Releases the native store. Idempotent. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            closed = true;
            cleanable.clean();
        } finally {
            lock.writeLock().unlock();
        }
    }

    private long enter() {
        lock.readLock().lock();
        if (closed) {
            lock.readLock().unlock();
            throw new IllegalStateException("the MetadataStore is closed");
        }
        return handle.pointer;
    }

    private void exit() {
        lock.readLock().unlock();
        Reference.reachabilityFence(this);
    }

    /**
     * Applies consumed records in one call. {@code data} holds each record's key bytes then value
     * bytes, records back to back; {@code keyLengths[i]} / {@code valueLengths[i]} are -1 for a null
     * key / value. Returns one {@link Outcome} code per record. A layout that does not add up throws
     * {@link RlMetaException.InvalidArgument} before any record is applied.
     */
    public byte[] apply(long[] offsets, byte[] data, int[] keyLengths, int[] valueLengths) {
        long h = enter();
        try {
            return nativeApply(h, offsets, data, keyLengths, valueLengths);
        } finally {
            exit();
        }
    }

    /**
     * Kafka's {@code maybeLoadPartition}: starts holding a user partition (no-op if held). True when
     * it was not held: it starts empty, and its metadata partition must be replayed from the
     * beginning before it is marked initialized.
     */
    public boolean loadPartition(long topicIdMsb, long topicIdLsb, String topic, int partition) {
        long h = enter();
        try {
            return nativeLoadPartition(h, topicIdMsb, topicIdLsb, topic, partition);
        } finally {
            exit();
        }
    }

    /**
     * Holds a user partition again from nothing (empty, not initialized, nothing applied): call it
     * on the thread that applies records, right before replaying the partition's metadata partition
     * from its beginning, so that records applied since {@link #loadPartition} by a poll already
     * under way do not stand as already applied.
     */
    public void resetPartition(long topicIdMsb, long topicIdLsb, String topic, int partition) {
        long h = enter();
        try {
            nativeResetPartition(h, topicIdMsb, topicIdLsb, topic, partition);
        } finally {
            exit();
        }
    }

    /**
     * Forgets what was replayed for every user partition held in metadata partition {@code mp} (of
     * {@code numPartitions}) and holds them again, empty and not initialized, for a replay of that
     * one metadata partition from its beginning. Returns how many partitions were reset.
     */
    public int rewindMetadataPartition(int mp, int numPartitions) {
        long h = enter();
        try {
            return nativeRewindMetadataPartition(h, mp, numPartitions);
        } finally {
            exit();
        }
    }

    /** Marks a user partition initialized (replay caught up); false if it was deleted (DELETE_PARTITION_FINISHED). */
    public boolean markInitialized(long topicIdMsb, long topicIdLsb, String topic, int partition) {
        long h = enter();
        try {
            return nativeMarkInitialized(h, topicIdMsb, topicIdLsb, topic, partition);
        } finally {
            exit();
        }
    }

    /** Whether a user partition is held and initialized. */
    public boolean isInitialized(long topicIdMsb, long topicIdLsb, int partition) {
        long h = enter();
        try {
            return nativeIsInitialized(h, topicIdMsb, topicIdLsb, partition);
        } finally {
            exit();
        }
    }

    /**
     * The native bytes this store holds, by the core's own account of its structures (the
     * allocator's overhead and freed memory it keeps are not counted): the cache outside the JVM
     * heap. Walks every held segment under the read lock (applies wait meanwhile): read it at
     * intervals, not per lookup.
     */
    public long memoryBytes() {
        long h = enter();
        try {
            return nativeMemoryBytes(h);
        } finally {
            exit();
        }
    }

    /**
     * How many segments of a user partition this store saw deleted and a later record brought back
     * (the core's {@code Store::resurrections}: a deposed leader's late backfill); 0 for a partition
     * not held. The leader's {@link #planBackfill} deletes them again before anything else.
     */
    public int resurrections(long topicIdMsb, long topicIdLsb, int partition) {
        long h = enter();
        try {
            return nativeResurrections(h, topicIdMsb, topicIdLsb, partition);
        } finally {
            exit();
        }
    }

    /** Stops holding a user partition (Kafka's {@code onStopPartitions}); a later load starts it empty. */
    public void unloadPartition(long topicIdMsb, long topicIdLsb, int partition) {
        long h = enter();
        try {
            nativeUnloadPartition(h, topicIdMsb, topicIdLsb, partition);
        } finally {
            exit();
        }
    }

    /**
     * Kafka's {@code remoteLogSegmentMetadata(tp, epoch, offset)}: the segment holding the offset,
     * or null. Throws {@link RlMetaException.NotFound} for a partition not held,
     * {@link RlMetaException.NotInitialized} for one not initialized (as the other queries do).
     */
    public byte[] segmentFor(long msb, long lsb, int partition, int epoch, long offset) {
        long h = enter();
        try {
            return nativeSegmentFor(h, msb, lsb, partition, epoch, offset);
        } finally {
            exit();
        }
    }

    /** Kafka's {@code highestOffsetForEpoch}; {@link #NO_OFFSET} when none. */
    public long highestOffsetForEpoch(long msb, long lsb, int partition, int epoch) {
        long h = enter();
        try {
            return nativeHighestOffsetForEpoch(h, msb, lsb, partition, epoch);
        } finally {
            exit();
        }
    }

    /** Kafka's {@code listRemoteLogSegments(tp)}: every segment, by start offset. */
    public byte[][] segments(long msb, long lsb, int partition) {
        long h = enter();
        try {
            return nativeSegments(h, msb, lsb, partition);
        } finally {
            exit();
        }
    }

    /**
     * How many segments {@link #segments} lists for a user partition (same exceptions), without
     * encoding them: what a metric counts.
     */
    public int segmentCount(long msb, long lsb, int partition) {
        long h = enter();
        try {
            return nativeSegmentCount(h, msb, lsb, partition);
        } finally {
            exit();
        }
    }

    /** Kafka's {@code listRemoteLogSegments(tp, epoch)}, by start offset. */
    public byte[][] segmentsForEpoch(long msb, long lsb, int partition, int epoch) {
        long h = enter();
        try {
            return nativeSegmentsForEpoch(h, msb, lsb, partition, epoch);
        } finally {
            exit();
        }
    }

    /**
     * {@link #segments}, the values packed in a few arrays of up to 64 KiB and read one at a time:
     * a handful of JNI allocations for the listing instead of one per segment, and nothing copied
     * out before it is asked for.
     */
    public PackedValues packedSegments(long msb, long lsb, int partition) {
        long h = enter();
        try {
            return new PackedValues(nativePackedSegments(h, msb, lsb, partition));
        } finally {
            exit();
        }
    }

    /** {@link #segmentsForEpoch}, packed as {@link #packedSegments} packs them. */
    public PackedValues packedSegmentsForEpoch(long msb, long lsb, int partition, int epoch) {
        long h = enter();
        try {
            return new PackedValues(nativePackedSegmentsForEpoch(h, msb, lsb, partition, epoch));
        } finally {
            exit();
        }
    }

    /** Kafka's {@code nextSegmentWithTxnIndex(tp, epoch, offset)}, or null. */
    public byte[] nextSegmentWithTxnIndex(long msb, long lsb, int partition, int epoch, long offset) {
        long h = enter();
        try {
            return nativeNextSegmentWithTxnIndex(h, msb, lsb, partition, epoch, offset);
        } finally {
            exit();
        }
    }

    /** Kafka's {@code remoteLogSize(tp, epoch)}: the sizes of the segments listed for the epoch. */
    public long remoteLogSize(long msb, long lsb, int partition, int epoch) {
        long h = enter();
        try {
            return nativeRemoteLogSize(h, msb, lsb, partition, epoch);
        } finally {
            exit();
        }
    }

    /** The partition's delete state: -1 for none, else Kafka's {@code RemotePartitionDeleteState} id. */
    public int partitionDeleteState(long msb, long lsb, int partition) {
        long h = enter();
        try {
            return nativePartitionDeleteState(h, msb, lsb, partition);
        } finally {
            exit();
        }
    }

    /** A segment's state as Kafka's listing shows it: null if unknown, else one byte, Kafka's state id. */
    public byte[] segmentState(long msb, long lsb, int partition, long idMsb, long idLsb) {
        long h = enter();
        try {
            return nativeSegmentState(h, msb, lsb, partition, idMsb, idLsb);
        } finally {
            exit();
        }
    }

    /**
     * The write planner. {@code event} is the value Kafka 4.4.0's {@code RemoteLogMetadataSerde}
     * writes for the broker's object ({@code RemoteLogSegmentMetadata} in COPY_SEGMENT_STARTED,
     * {@code RemoteLogSegmentMetadataUpdate}, or {@code RemotePartitionDeleteMetadata});
     * {@code brokerLeaderEpoch} is the writer's current leader epoch of the partition;
     * {@code level} the metadata partition's feature level (0, 1, 2). Returns the records to
     * produce, in order. A refusal throws {@link RlMetaException.InvalidState} (retriable).
     */
    public PlannedRecords plan(byte[] event, int brokerLeaderEpoch, int level) {
        long h = enter();
        try {
            return nativePlan(h, event, brokerLeaderEpoch, level);
        } finally {
            exit();
        }
    }

    /**
     * {@link #plan}, for a broker that knows of itself only what Kafka lets it see: whether it
     * leads the partition now ({@code leads}) and the newest leader epoch Kafka has used with it for
     * the partition since it became leader ({@code knownEpoch}, -1 if none). The core refuses a copy
     * from a broker that does not lead, and keys a copy with the known epoch raised to the newest
     * epoch of the segment's own data (an epoch bump under the same leader).
     */
    public PlannedRecords planAsWriter(byte[] event, boolean leads, int knownEpoch, int level) {
        long h = enter();
        try {
            return nativePlanAsWriter(h, event, leads, knownEpoch, level);
        } finally {
            exit();
        }
    }

    /**
     * The backfill of a user partition (the core's {@code Store::plan_backfill}): its segments
     * written before KIP-1266 (null keys) written again under their KIP-1266 keys, at
     * {@code level} (1 or 2). Empty once every live segment is held by keyed records.
     * {@code writerEpoch} is the writer's leader epoch, or -1 if unknown (used only for a segment
     * whose records name no leader epoch). A refusal (level 0, a segment being deleted, two
     * segments on one key) throws {@link RlMetaException.InvalidState}; a partition this store
     * does not hold, {@link RlMetaException.NotFound}.
     */
    public PlannedRecords planBackfill(long topicIdMsb, long topicIdLsb, int partition, int writerEpoch, int level) {
        long h = enter();
        try {
            return nativePlanBackfill(h, topicIdMsb, topicIdLsb, partition, writerEpoch, level);
        } finally {
            exit();
        }
    }

    /** A diagnostic dump of everything the store holds (JSON text; for people and tests). */
    public String dumpJson() {
        long h = enter();
        try {
            return nativeDumpJson(h);
        } finally {
            exit();
        }
    }

    private static native long nativeNew(boolean held);
    private static native void nativeFree(long h);
    private static native byte[] nativeApply(long h, long[] offsets, byte[] data, int[] keyLengths, int[] valueLengths);
    private static native boolean nativeLoadPartition(long h, long msb, long lsb, String topic, int partition);
    private static native int nativeRewindMetadataPartition(long h, int mp, int numPartitions);
    private static native void nativeResetPartition(long h, long msb, long lsb, String topic, int partition);
    private static native PlannedRecords nativePlanAsWriter(long h, byte[] event, boolean leads, int knownEpoch, int level);
    private static native boolean nativeMarkInitialized(long h, long msb, long lsb, String topic, int partition);
    private static native boolean nativeIsInitialized(long h, long msb, long lsb, int partition);
    private static native int nativeResurrections(long h, long msb, long lsb, int partition);

    private static native long nativeMemoryBytes(long h);

    private static native int nativeSegmentCount(long h, long msb, long lsb, int partition);
    private static native void nativeUnloadPartition(long h, long msb, long lsb, int partition);
    private static native byte[] nativeSegmentFor(long h, long msb, long lsb, int partition, int epoch, long offset);
    private static native long nativeHighestOffsetForEpoch(long h, long msb, long lsb, int partition, int epoch);
    private static native byte[][] nativeSegments(long h, long msb, long lsb, int partition);
    private static native byte[][] nativeSegmentsForEpoch(long h, long msb, long lsb, int partition, int epoch);
    private static native byte[][] nativePackedSegments(long h, long msb, long lsb, int partition);
    private static native byte[][] nativePackedSegmentsForEpoch(long h, long msb, long lsb, int partition, int epoch);
    private static native byte[] nativeNextSegmentWithTxnIndex(long h, long msb, long lsb, int partition, int epoch, long offset);
    private static native long nativeRemoteLogSize(long h, long msb, long lsb, int partition, int epoch);
    private static native int nativePartitionDeleteState(long h, long msb, long lsb, int partition);
    private static native byte[] nativeSegmentState(long h, long msb, long lsb, int partition, long idMsb, long idLsb);
    private static native PlannedRecords nativePlanBackfill(long h, long msb, long lsb, int partition, int writerEpoch,
                                                            int level);
    private static native PlannedRecords nativePlan(long h, byte[] event, int brokerLeaderEpoch, int level);
    private static native String nativeDumpJson(long h);
    private static native void nativePanicForTest(long h);
}
