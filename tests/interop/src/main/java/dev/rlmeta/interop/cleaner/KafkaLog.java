package dev.rlmeta.interop.cleaner;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.CleanerAccess;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * One partition of {@code __remote_log_metadata} on a real log directory, run by Kafka 4.4.0's own
 * classes: {@code UnifiedLog} (appends as leader, rolls, {@code deleteOldSegments} for retention)
 * and the log cleaner's {@code Cleaner} (one cleaning round over the dirty range Kafka's
 * {@code LogCleanerManager.cleanableOffsets} gives, with the returned end offset kept as the
 * cleaner checkpoint, as {@code LogCleaner} does). Time is a settable clock handed to the log and
 * the cleaner. What this class never does: decide what is kept (Kafka does), or schedule
 * (a round runs when {@link #clean} is called and the dirty range holds bytes; the broker would
 * also wait for {@code min.cleanable.dirty.ratio}).
 */
public final class KafkaLog implements AutoCloseable {
    /** A clock that moves only when told (Kafka's own MockTime lives in a test jar). */
    static final class Clock implements Time {
        long now;

        @Override
        public long milliseconds() {
            return now;
        }

        @Override
        public long nanoseconds() {
            return now * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
            now += ms;
        }
    }

    /** Runs every task at once, on the caller's thread (file deletions after a swap or retention). */
    static final class InlineScheduler implements Scheduler {
        @Override
        public void startup() {}

        @Override
        public void shutdown() {}

        @Override
        public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
            if (periodMs <= 0) task.run();
            return new Done();
        }

        @Override
        public void resizeThreadPool(int n) {}
    }

    /** The future of a task that has already run. */
    static final class Done implements ScheduledFuture<Object> {
        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(0, o.getDelay(TimeUnit.MILLISECONDS));
        }

        @Override
        public boolean cancel(boolean interrupt) {
            return false;
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public boolean isDone() {
            return true;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }
    }

    private static final BrokerTopicStats STATS = new BrokerTopicStats(false);

    final Clock clock = new Clock();
    private final Path dir;
    private final UnifiedLog log;
    private final Cleaner cleaner;
    private Optional<Long> checkpoint = Optional.empty();
    /** Cleaning rounds run and skipped (nothing dirty) so far. */
    int rounds, skipped;

    public int rounds() {
        return rounds;
    }

    public KafkaLog(Path parent, Map<String, Object> config, long now) throws Exception {
        clock.now = now;
        dir = Files.createTempDirectory(parent, "__remote_log_metadata-");
        // The directory name must parse as topic-partition.
        Path logDir = dir.resolve("__remote_log_metadata-0");
        Files.createDirectories(logDir);
        log = UnifiedLog.create(logDir.toFile(), logConfig(config), 0L, 0L, new InlineScheduler(), STATS, clock,
                60_000, new ProducerStateManagerConfig(86_400_000, false), 600_000, new LogDirFailureChannel(1), true,
                Optional.empty());
        cleaner = new Cleaner(0, new SkimpyOffsetMap(128 * 1024), 64 * 1024, 1024 * 1024, 0.9,
                new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", clock), clock, tp -> {});
    }

    /** The topic config plus what the harness needs: no future-timestamp check, immediate file deletion. */
    static LogConfig logConfig(Map<String, Object> topicConfig) {
        Map<String, Object> props = new HashMap<>(topicConfig);
        props.put("message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE));
        props.put("message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE));
        props.put("file.delete.delay.ms", "0");
        // Small preallocated index files (10 MiB by default): each roll creates and trims them.
        props.put("segment.index.bytes", Integer.toString(64 * 1024));
        return new LogConfig(props);
    }

    public void updateConfig(Map<String, Object> topicConfig) {
        log.updateConfig(logConfig(topicConfig));
    }

    /** Appends one record in its own batch as the leader; the high watermark follows (acks=all, one replica). */
    public long append(long timestampMs, byte[] key, byte[] value) throws IOException {
        long offset = log.logEndOffset();
        log.appendAsLeader(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(timestampMs, key, value)), 0);
        log.updateHighWatermark(log.logEndOffset());
        return offset;
    }

    public void roll() throws IOException {
        log.roll();
    }

    /** Retention ({@code deleteOldSegments}, which follows the policy) then one cleaning round, at {@code now}. */
    public void clean(long now) throws Exception {
        clock.now = now;
        log.deleteOldSegments();
        if (!log.config().compact) return;
        long[] range = CleanerAccess.cleanableOffsets(log, checkpoint, now);
        LogToClean ltc = new LogToClean(log, range[0], range[1], false);
        if (ltc.cleanableBytes() <= 0) {
            skipped++;
            return;
        }
        checkpoint = Optional.of(cleaner.doClean(ltc, now).getKey());
        rounds++;
    }

    /** The offsets of the records the log holds, in order (empty batches kept by the cleaner hold none). */
    List<Long> offsets() throws IOException {
        List<Long> out = new ArrayList<>();
        for (LogSegment s : log.logSegments()) {
            for (RecordBatch b : s.log().batches()) {
                for (Record r : b) out.add(r.offset());
            }
        }
        return out;
    }

    /** The records the log holds as {offset, key, value} (for the planner property's replay). */
    public List<Object[]> records() throws IOException {
        List<Object[]> out = new ArrayList<>();
        for (LogSegment s : log.logSegments()) {
            for (RecordBatch b : s.log().batches()) {
                for (Record r : b) out.add(new Object[] {r.offset(), bytes(r.key()), bytes(r.value())});
            }
        }
        return out;
    }

    /** Segment base offsets and largest timestamps, for failure reports. */
    String segments() throws IOException {
        StringBuilder sb = new StringBuilder();
        for (LogSegment s : log.logSegments()) {
            sb.append(String.format("[base %d, %d bytes, largestTs %d] ", s.baseOffset(), s.size(),
                    s.size() > 0 ? s.largestTimestamp() : -1));
        }
        return sb.toString().trim();
    }

    private static byte[] bytes(ByteBuffer b) {
        if (b == null) return null;
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    @Override
    public void close() throws IOException {
        log.close();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }
}
