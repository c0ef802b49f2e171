package dev.rlmeta.kafka;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.PackedValues;
import dev.rlmeta.RlMetaException;

/**
 * The diagnostic dump ({@link RlmetaRemoteLogMetadataManager#DUMP_PATH}): the store's contents, its
 * answers to a spread of lookups per held partition, and the consumer's levels, positions and
 * counters, as one JSON object; the dump thread rewrites the file at most once a second when
 * something changed, and close() once more.
 *
 * <p>It never changes what it dumps: the answers are asked of the store directly, never through the
 * manager's lookups (which learn epochs from their arguments).
 */
final class Diagnostics {
    private static final Logger log = LoggerFactory.getLogger(RlmetaRemoteLogMetadataManager.class);
    /** Offsets and epochs a dump probes per held partition (the cluster tests compare them with Kafka's replay). */
    private static final int PROBE_OFFSETS = 48;

    private final int brokerId;
    private final Path dumpPath;
    private final HeldPartitions held;
    private final MetadataConsumer consumer;
    private final Lookups lookups;
    private final ThreadGuard guard;
    private final BooleanSupplier closed;

    Diagnostics(PluginConfig cfg, HeldPartitions held, MetadataConsumer consumer, Lookups lookups, ThreadGuard guard,
                BooleanSupplier closed) {
        this.brokerId = cfg.brokerId;
        this.dumpPath = cfg.dumpPath;
        this.held = held;
        this.consumer = consumer;
        this.lookups = lookups;
        this.guard = guard;
        this.closed = closed;
    }

    /** The diagnostic dump: {"brokerId":..,"levels":[..],"positions":[..],"counters":{..},"store":<core dump>}. */
    String dumpJson() {
        String storeDump;
        MetadataStore s = held.store();
        try {
            storeDump = s == null ? "null" : s.dumpJson();
        } catch (IllegalStateException | RlMetaException e) { // replaced, closed or poisoned meanwhile
            storeDump = "null";
        }
        String answers;
        try {
            answers = s == null ? "[]" : answersJson(s);
        } catch (IllegalStateException | RlMetaException e) {
            answers = "[]";
        }
        return "{\"brokerId\":" + brokerId + "," + consumer.statusJson() + ",\"store\":" + storeDump
                + ",\"answers\":" + answers + "}";
    }

    /**
     * The dump's "answers": for each partition Kafka has this broker hold, what the store answers to
     * {@code highestOffsetForEpoch} and {@code remoteLogSegmentMetadata} (the segment id, or null) at
     * a spread of probes: every leader epoch its segments name, one above the highest, and up to
     * {@value #PROBE_OFFSETS} offsets among the segments' bounds and epoch starts. Asked of the
     * store directly (never through the RLMM methods, which learn epochs from their arguments), so
     * a dump changes nothing. A partition the store refuses carries {"error": ...}.
     */
    private String answersJson(MetadataStore s) {
        List<TopicIdPartition> partitions = new ArrayList<>(held.loaded);
        partitions.sort(java.util.Comparator.comparing(TopicIdPartition::toString));
        StringBuilder sb = new StringBuilder("[");
        for (TopicIdPartition tp : partitions) {
            long msb = tp.topicId().getMostSignificantBits();
            long lsb = tp.topicId().getLeastSignificantBits();
            int p = tp.partition();
            if (sb.length() > 1) {
                sb.append(',');
            }
            sb.append("{\"id\":\"").append(tp.topicId()).append("\",\"partition\":").append(p);
            try {
                TreeSet<Integer> epochs = new TreeSet<>();
                TreeSet<Long> bounds = new TreeSet<>();
                for (PackedValues listed = s.packedSegments(msb, lsb, p); listed.hasNext(); ) {
                    RemoteLogSegmentMetadata m = lookups.segment(listed.next());
                    epochs.addAll(m.segmentLeaderEpochs().keySet());
                    bounds.addAll(m.segmentLeaderEpochs().values());
                    bounds.add(m.startOffset());
                    bounds.add(m.endOffset());
                    bounds.add(m.endOffset() + 1);
                }
                epochs.add(epochs.isEmpty() ? 0 : epochs.last() + 1);
                List<Long> all = new ArrayList<>(bounds);
                List<Long> offsets = new ArrayList<>();
                for (int i = 0; i < Math.min(all.size(), PROBE_OFFSETS); i++) {
                    offsets.add(all.get(all.size() <= PROBE_OFFSETS ? i
                            : (int) ((long) i * (all.size() - 1) / (PROBE_OFFSETS - 1))));
                }
                StringBuilder highest = new StringBuilder();
                StringBuilder segmentFor = new StringBuilder();
                for (int e : epochs) {
                    long h = s.highestOffsetForEpoch(msb, lsb, p, e);
                    highest.append(highest.length() == 0 ? "" : ",").append('[').append(e).append(',')
                            .append(h == MetadataStore.NO_OFFSET ? "null" : Long.toString(h)).append(']');
                    for (long o : offsets) {
                        byte[] m = s.segmentFor(msb, lsb, p, e, o);
                        segmentFor.append(segmentFor.length() == 0 ? "" : ",").append('[').append(e).append(',')
                                .append(o).append(',').append(m == null ? "null"
                                        : "\"" + lookups.segment(m).remoteLogSegmentId().id() + "\"").append(']');
                    }
                }
                sb.append(",\"highestOffsetForEpoch\":[").append(highest).append("],\"segmentFor\":[")
                        .append(segmentFor).append(']');
            } catch (RlMetaException e) {
                sb.append(",\"error\":\"").append(e.getClass().getSimpleName()).append('"');
            }
            sb.append('}');
        }
        return sb.append(']').toString();
    }

    /** The dump thread: a new dump at most once a second, when something changed. */
    void dumpLoop() {
        while (!closed.getAsBoolean()) {
            guard.checkpoint(RlmetaRemoteLogMetadataManager.DUMP_THREAD);
            if (consumer.takeDirty()) {
                writeDump();
            }
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Writes the dump (a temporary file moved into place); a failure is logged, never thrown. */
    void writeDump() {
        Path path = dumpPath;
        if (path == null || held.store() == null) {
            return;
        }
        try {
            Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
            Files.writeString(tmp, dumpJson());
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            log.warn("rlmeta RLMM could not write its dump to {}: {}", path, e.toString());
        }
    }
}
