package dev.rlmeta.kafka;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.PlannedRecords;
import dev.rlmeta.RlMetaException;

/**
 * The writer: Kafka's lifecycle events (a segment's copy, its updates, a partition's deletion) are
 * planned by the core at the metadata partition's level, the planned records produced in order, and
 * the returned future completes once this broker's consumer has applied the last one
 * (read-your-writes), always within consume.wait.ms. One write per user partition at a time: its
 * write lock is held from plan to applied, by a lifecycle write and by a backfill round alike
 * ({@link #backfillHost} hands the backfill the same locks, store, clients and epochs).
 *
 * <p>It never decides a record's key, value or whether it is written (the core plans them), and
 * never waits for the cluster on Kafka's thread beyond the producer's send().
 */
final class Writer {
    private static final Logger log = LoggerFactory.getLogger(RlmetaRemoteLogMetadataManager.class);

    private final PluginConfig config;
    private final String topic;
    private final MetadataConsumer consumer;
    private final HeldPartitions held;
    private final Clients clients;
    private final AccessProblems problems;
    private final BooleanSupplier closed;
    private final BooleanSupplier ready;
    private final RemoteLogMetadataSerde serde;
    // One per user partition: held by a lifecycle write and by a backfill round from plan to applied
    private final Map<TopicIdPartition, Semaphore> writeLocks = new ConcurrentHashMap<>();
    // refused writes: one WARN a minute per partition and kind, with the count held back
    private final RateLimitedLog refusals = new RateLimitedLog(60_000);

    Writer(PluginConfig config, MetadataConsumer consumer, HeldPartitions held, Clients clients,
           AccessProblems problems, BooleanSupplier closed, BooleanSupplier ready, RemoteLogMetadataSerde serde) {
        this.config = config;
        this.topic = config.topic;
        this.consumer = consumer;
        this.held = held;
        this.clients = clients;
        this.problems = problems;
        this.closed = closed;
        this.ready = ready;
        this.serde = serde;
    }

    /**
     * Plans the event with the core at the metadata partition's level, produces the planned records
     * in order, and returns a future that completes once the consumer has applied the last one.
     */
    CompletableFuture<Void> write(RemoteLogMetadata event, TopicIdPartition tp) throws RemoteStorageException {
        ensureReady();
        // one write of this user partition at a time, backfill rounds included, from plan to applied
        Semaphore lock = writeLock(tp);
        try {
            if (!lock.tryAcquire(config.consumeWaitMs(), TimeUnit.MILLISECONDS)) {
                return CompletableFuture.failedFuture(KafkaCompat.retriable("another write of " + tp
                        + " (or its backfill) did not finish within " + config.consumeWaitMs() + " ms; retry"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CompletableFuture.failedFuture(KafkaCompat.retriable("interrupted waiting to write " + tp, e));
        }
        CompletableFuture<Void> f;
        try {
            f = writeHoldingLock(event, tp);
        } catch (RemoteStorageException | RuntimeException e) {
            lock.release();
            throw e;
        }
        f.whenComplete((v, err) -> lock.release());
        return f;
    }

    private void ensureReady() throws RemoteStorageException {
        if (closed.getAsBoolean()) {
            throw new IllegalStateException("the rlmeta metadata manager is closed");
        }
        if (!ready.getAsBoolean()) {
            throw KafkaCompat.retriable("the rlmeta metadata manager is not initialized yet");
        }
    }

    Semaphore writeLock(TopicIdPartition tp) {
        return writeLocks.computeIfAbsent(tp, t -> new Semaphore(1));
    }

    /** How many user partitions have a write lock (diagnostics: it follows the partitions held). */
    int writeLockCount() {
        return writeLocks.size();
    }

    /** Partitions no longer held keep no write lock (a free one: Kafka writes nothing for them now). */
    void dropWriteLocks(Set<TopicIdPartition> partitions) {
        for (TopicIdPartition tp : partitions) {
            Semaphore lock = writeLocks.get(tp);
            if (lock != null && lock.tryAcquire()) {
                writeLocks.remove(tp, lock);
                lock.release();
            }
        }
    }

    /** close(): every write lock forgotten. */
    void clear() {
        writeLocks.clear();
    }

    private CompletableFuture<Void> writeHoldingLock(RemoteLogMetadata event, TopicIdPartition tp)
            throws RemoteStorageException {
        int mp = RlmetaRemoteLogMetadataManager.metadataPartition(tp, config.numPartitions);
        if (consumer.stopped(mp)) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(topic + "-" + mp + " (holding " + tp + ") stopped "
                    + "on this broker after its records failed to apply again and again (see the broker's log)"));
        }
        if (!consumer.isAssigned(mp)) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    topic + "-" + mp + " (holding " + tp + ") is not assigned to this broker's metadata consumer yet"));
        }
        int level = consumer.level(mp);
        if (level == MetadataConsumer.UNKNOWN_LEVEL) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the level of " + topic + "-" + mp + " is not known yet (the partition is not read to its end)"));
        }
        // never asked of the cluster: the epoch Kafka used with this manager (or unknown: the core
        // refuses a copy retriably, and keys updates and deletions by the segment's upload)
        int epoch = held.knownLeaderEpoch(tp);
        byte[] value = serde.serialize(event);
        PlannedRecords plan;
        MetadataStore s = held.store();
        if (s == null || !consumer.serving()) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the rlmeta store is being rebuilt from " + topic + "; retry the write"));
        }
        try {
            plan = s.planAsWriter(value, held.leading(tp), epoch, level);
        } catch (IllegalStateException e) { // the store was replaced (a rebuild) or closed under us
            if (closed.getAsBoolean()) {
                throw e;
            }
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the rlmeta store is being rebuilt from " + topic + "; retry the write", e));
        } catch (RlMetaException.Internal e) {
            consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the rlmeta store is unusable and is being rebuilt from " + topic + ": " + e.getMessage(), e));
        } catch (RlMetaException.InvalidState | RlMetaException.NotInitialized e) {
            String sfx = refusals.admit(tp + " " + kind(event)); // Kafka retries every few seconds
            if (sfx != null) {
                log.warn("rlmeta RLMM refused {} of {} at level {}: {}{}", kind(event), tp, level, e.getMessage(), sfx);
            }
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "rlmeta refused the write (retry later): " + e.getMessage(), e));
        } catch (RlMetaException.NotFound e) {
            throw new RemoteResourceNotFoundException(e.getMessage());
        } catch (RlMetaException e) {
            throw new RemoteStorageException("rlmeta could not plan " + kind(event) + " of " + tp + ": " + e.getMessage(), e);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        int n = plan.size();
        if (n == 0) {
            done.complete(null);
            return done;
        }
        AtomicInteger left = new AtomicInteger(n);
        AtomicReference<Long> lastOffset = new AtomicReference<>(-1L);
        KafkaProducer<byte[], byte[]> p = clients.currentProducer();
        String step = "write to " + topic;
        for (int i = 0; i < n; i++) {
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, mp, plan.keys[i], plan.values[i]);
            try {
                p.send(r, (md, err) -> {
                    if (err != null) {
                        done.completeExceptionally(producingFailed(p, step, mp, err));
                        return;
                    }
                    problems.resolved(step);
                    lastOffset.accumulateAndGet(md.offset(), Math::max);
                    if (left.decrementAndGet() == 0) {
                        consumer.completeWhenApplied(mp, lastOffset.get(), done);
                    }
                });
            } catch (RuntimeException err) { // send() itself: metadata refused or not had within max.block.ms
                done.completeExceptionally(producingFailed(p, step, mp, err));
                break;
            }
        }
        long waitMs = config.consumeWaitMs();
        return done.orTimeout(waitMs, TimeUnit.MILLISECONDS).handle((v, err) -> {
            if (err == null) {
                return null;
            }
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            if (cause instanceof TimeoutException) {
                throw new CompletionException(KafkaCompat.retriable(
                        "the metadata consumer did not apply " + topic + "-" + mp + " up to the written record within "
                                + waitMs + " ms"));
            }
            throw new CompletionException(cause);
        });
    }

    /**
     * A produce that failed: reported once; a refusal (authorization, authentication) is retriable
     * (the copy task retries, and a granted ACL or fixed credential makes it pass), and the
     * producer is replaced, since an idempotent producer refused its producer id stays failed.
     */
    private RemoteStorageException producingFailed(KafkaProducer<byte[], byte[]> p, String step, int mp, Throwable err) {
        Throwable cause = AccessProblems.cause(err);
        String msg = problems.report(step, cause, "Write", "Topic:" + topic);
        if (AccessProblems.isAccess(cause)) {
            clients.replaceProducer(p);
            return KafkaCompat.retriable("producing to " + topic + "-" + mp + " was refused: " + msg, cause);
        }
        if (cause instanceof org.apache.kafka.common.errors.RetriableException) {
            return KafkaCompat.retriable("producing to " + topic + "-" + mp + " failed: " + cause, cause);
        }
        return new RemoteStorageException("producing to " + topic + "-" + mp + " failed: " + cause, cause);
    }

    private static String kind(RemoteLogMetadata e) {
        if (e instanceof RemoteLogSegmentMetadata) {
            RemoteLogSegmentMetadata m = (RemoteLogSegmentMetadata) e;
            return "segment " + m.remoteLogSegmentId().id() + " " + m.state();
        }
        if (e instanceof RemoteLogSegmentMetadataUpdate) {
            RemoteLogSegmentMetadataUpdate u = (RemoteLogSegmentMetadataUpdate) e;
            return "segment " + u.remoteLogSegmentId().id() + " " + u.state();
        }
        return "partition delete " + ((RemotePartitionDeleteMetadata) e).state();
    }

    /** The backfill's hand-off: the same store, consumer, clients, epochs and write locks as Kafka's writes. */
    Backfill.Host backfillHost(ThreadGuard guard) {
        return new Backfill.Host() {
            @Override
            public MetadataStore store() {
                return held.store();
            }

            @Override
            public MetadataConsumer consumer() {
                return consumer;
            }

            @Override
            public Admin admin() {
                return clients.admin;
            }

            @Override
            public KafkaProducer<byte[], byte[]> producer() {
                return clients.currentProducer();
            }

            @Override
            public boolean leads(TopicIdPartition tp) {
                return held.leads(tp);
            }

            @Override
            public int knownLeaderEpoch(TopicIdPartition tp) {
                return held.knownLeaderEpoch(tp);
            }

            @Override
            public Semaphore writeLock(TopicIdPartition tp) {
                return Writer.this.writeLock(tp);
            }

            @Override
            public boolean closed() {
                return closed.getAsBoolean();
            }

            @Override
            public void checkpoint() {
                guard.checkpoint(RlmetaRemoteLogMetadataManager.BACKFILL_THREAD);
            }

            @Override
            public void caught(Error e) {
                guard.caught(RlmetaRemoteLogMetadataManager.BACKFILL_THREAD, e);
            }
        };
    }
}
