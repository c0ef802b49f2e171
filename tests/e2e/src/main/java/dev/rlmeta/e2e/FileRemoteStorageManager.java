package dev.rlmeta.e2e;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.log.remote.storage.LogSegmentData;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageManager;

/**
 * A minimal {@link RemoteStorageManager} that keeps "remote" segments in a local directory.
 * Test-only: it exists so that a real broker can run tiered storage without any object store.
 *
 * <p>Configuration (given to the broker with the {@code rsm.config.} prefix, which Kafka strips):
 * <ul>
 *   <li>{@code dir} (required): root directory of the remote store.</li>
 * </ul>
 *
 * <p>Layout: {@code <dir>/<topic>-<partition>-<topicId>/<segmentId>/} holding
 * {@code segment.log}, {@code offset.index}, {@code time.index}, optionally {@code txn.index},
 * {@code producer.snapshot} and {@code leader-epoch.checkpoint}. A segment directory is first
 * written under a {@code .tmp} name and renamed, so a listed segment directory is always complete.
 *
 * <p>Every successful copy and delete is also appended as one line to {@code <dir>/journal.txt}:
 * {@code COPY <topicIdPartition> <segmentId> <startOffset> <endOffset> <bytes>} or
 * {@code DELETE <topicIdPartition> <segmentId> <startOffset> <endOffset>}. The harness script
 * polls that journal to know when copies and retention deletions have happened.
 *
 * <p>Holds, so that a test can kill a broker in the middle of an upload or a deletion: while a
 * file {@code <dir>/hold-copy-<topic>} (or {@code hold-delete-<topic>}) exists, a copy (delete)
 * of a segment of that topic first appends {@code HOLD-COPY <topicIdPartition> <segmentId>
 * <startOffset> <endOffset> broker=<id>} ({@code HOLD-DELETE ...}) to the journal, then waits
 * until the file is gone (at most 5 minutes) before doing its work. The broker has then written
 * COPY_SEGMENT_STARTED (DELETE_SEGMENT_STARTED) and not yet the matching FINISHED record.
 */
public class FileRemoteStorageManager implements RemoteStorageManager {
    public static final String DIR_CONFIG = "dir";

    private static final String SEGMENT = "segment.log";
    private static final String OFFSET_INDEX = "offset.index";
    private static final String TIME_INDEX = "time.index";
    private static final String TXN_INDEX = "txn.index";
    private static final String PRODUCER_SNAPSHOT = "producer.snapshot";
    private static final String LEADER_EPOCH = "leader-epoch.checkpoint";
    private static final String JOURNAL = "journal.txt";

    private static final long HOLD_LIMIT_MS = 300_000;

    private volatile Path root;
    private volatile String brokerId = "?";

    @Override
    public void configure(Map<String, ?> configs) {
        Object dir = configs.get(DIR_CONFIG);
        if (dir == null || dir.toString().isEmpty()) {
            throw new IllegalArgumentException("FileRemoteStorageManager needs the config '" + DIR_CONFIG
                    + "' (broker config rsm.config." + DIR_CONFIG + ")");
        }
        root = Paths.get(dir.toString()).toAbsolutePath();
        Object id = configs.get("broker.id");
        brokerId = id == null ? "?" : id.toString();
        try {
            Files.createDirectories(root);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create remote storage dir " + root, e);
        }
    }

    private Path root() {
        Path r = root;
        if (r == null) {
            throw new IllegalStateException("FileRemoteStorageManager used before configure()");
        }
        return r;
    }

    private Path partitionDir(TopicIdPartition tp) {
        return root().resolve(tp.topic() + "-" + tp.partition() + "-" + tp.topicId());
    }

    private Path segmentDir(RemoteLogSegmentMetadata md) {
        return partitionDir(md.topicIdPartition()).resolve(md.remoteLogSegmentId().id().toString());
    }

    @Override
    public Optional<RemoteLogSegmentMetadata.CustomMetadata> copyLogSegmentData(
            RemoteLogSegmentMetadata md, LogSegmentData data) throws RemoteStorageException {
        Path dest = segmentDir(md);
        Path tmp = dest.resolveSibling(dest.getFileName() + ".tmp");
        hold("copy", md);
        try {
            Files.createDirectories(dest.getParent());
            deleteTree(tmp);
            Files.createDirectories(tmp);
            Files.copy(data.logSegment(), tmp.resolve(SEGMENT));
            Files.copy(data.offsetIndex(), tmp.resolve(OFFSET_INDEX));
            Files.copy(data.timeIndex(), tmp.resolve(TIME_INDEX));
            if (data.transactionIndex().isPresent()) {
                Files.copy(data.transactionIndex().get(), tmp.resolve(TXN_INDEX));
            }
            Files.copy(data.producerSnapshotIndex(), tmp.resolve(PRODUCER_SNAPSHOT));
            ByteBuffer epochs = data.leaderEpochIndex().duplicate();
            try (FileChannel ch = FileChannel.open(tmp.resolve(LEADER_EPOCH),
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                while (epochs.hasRemaining()) {
                    ch.write(epochs);
                }
            }
            deleteTree(dest);
            try {
                Files.move(tmp, dest, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, dest);
            }
            journal("COPY " + md.topicIdPartition() + " " + md.remoteLogSegmentId().id() + " "
                    + md.startOffset() + " " + md.endOffset() + " " + Files.size(dest.resolve(SEGMENT)));
        } catch (IOException e) {
            try {
                deleteTree(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new RemoteStorageException("copy of " + md.remoteLogSegmentId() + " to " + dest + " failed", e);
        }
        return Optional.empty();
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata md, int startPosition)
            throws RemoteStorageException {
        return fetchLogSegment(md, startPosition, Integer.MAX_VALUE);
    }

    /** {@code endPosition} is inclusive, as the interface documents. */
    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata md, int startPosition, int endPosition)
            throws RemoteStorageException {
        if (startPosition < 0 || endPosition < startPosition) {
            throw new IllegalArgumentException("bad positions: start " + startPosition + ", end " + endPosition);
        }
        Path file = segmentDir(md).resolve(SEGMENT);
        try {
            FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
            try {
                long size = ch.size();
                long endExclusive = Math.min(size, (long) endPosition + 1);
                long len = Math.max(0, endExclusive - startPosition);
                ch.position(Math.min(startPosition, size));
                return new BoundedInputStream(Channels.newInputStream(ch), len);
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        } catch (NoSuchFileException e) {
            throw new RemoteResourceNotFoundException("no remote segment " + md.remoteLogSegmentId() + " at " + file, e);
        } catch (IOException e) {
            throw new RemoteStorageException("reading " + file + " failed", e);
        }
    }

    @Override
    public InputStream fetchIndex(RemoteLogSegmentMetadata md, IndexType indexType) throws RemoteStorageException {
        String name;
        switch (indexType) {
            case OFFSET:
                name = OFFSET_INDEX;
                break;
            case TIMESTAMP:
                name = TIME_INDEX;
                break;
            case PRODUCER_SNAPSHOT:
                name = PRODUCER_SNAPSHOT;
                break;
            case TRANSACTION:
                name = TXN_INDEX;
                break;
            case LEADER_EPOCH:
                name = LEADER_EPOCH;
                break;
            default:
                throw new IllegalArgumentException("unknown index type " + indexType);
        }
        Path file = segmentDir(md).resolve(name);
        try {
            return new ByteArrayInputStream(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            throw new RemoteResourceNotFoundException("no " + indexType + " index for " + md.remoteLogSegmentId()
                    + " at " + file, e);
        } catch (IOException e) {
            throw new RemoteStorageException("reading " + file + " failed", e);
        }
    }

    /** Idempotent: deleting a segment that is not there succeeds. */
    @Override
    public void deleteLogSegmentData(RemoteLogSegmentMetadata md) throws RemoteStorageException {
        Path dir = segmentDir(md);
        hold("delete", md);
        try {
            boolean existed = Files.exists(dir);
            deleteTree(dir);
            deleteTree(dir.resolveSibling(dir.getFileName() + ".tmp"));
            journal("DELETE " + md.topicIdPartition() + " " + md.remoteLogSegmentId().id() + " "
                    + md.startOffset() + " " + md.endOffset() + (existed ? "" : " (absent)"));
        } catch (IOException e) {
            throw new RemoteStorageException("deleting " + dir + " failed", e);
        }
    }

    @Override
    public void close() {
    }

    /** Waits while the hold file of this kind and topic exists (see the class comment). */
    private void hold(String kind, RemoteLogSegmentMetadata md) throws RemoteStorageException {
        Path marker = root().resolve("hold-" + kind + "-" + md.topicIdPartition().topic());
        if (!Files.exists(marker)) {
            return;
        }
        try {
            journal("HOLD-" + kind.toUpperCase(java.util.Locale.ROOT) + " " + md.topicIdPartition() + " "
                    + md.remoteLogSegmentId().id() + " " + md.startOffset() + " " + md.endOffset() + " broker=" + brokerId);
            long deadline = System.currentTimeMillis() + HOLD_LIMIT_MS;
            while (Files.exists(marker) && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
        } catch (IOException e) {
            throw new RemoteStorageException("writing the journal under " + root() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RemoteStorageException("interrupted while held by " + marker, e);
        }
    }

    private synchronized void journal(String line) throws IOException {
        Files.write(root().resolve(JOURNAL), (line + "\n").getBytes(StandardCharsets.UTF_8),
                StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path q : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(q);
            }
        }
    }

    /** Reads at most {@code remaining} bytes of the wrapped stream, then reports end of stream. */
    private static final class BoundedInputStream extends InputStream {
        private final InputStream in;
        private long remaining;

        BoundedInputStream(InputStream in, long limit) {
            this.in = in;
            this.remaining = limit;
        }

        @Override
        public int read() throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int b = in.read();
            if (b >= 0) {
                remaining--;
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (remaining <= 0) {
                return -1;
            }
            int n = in.read(buf, off, (int) Math.min(len, remaining));
            if (n > 0) {
                remaining -= n;
            }
            return n;
        }

        @Override
        public int available() throws IOException {
            return (int) Math.min(in.available(), remaining);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
