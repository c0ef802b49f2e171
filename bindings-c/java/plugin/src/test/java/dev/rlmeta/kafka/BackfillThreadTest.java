package dev.rlmeta.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

import dev.rlmeta.MetadataStore;

/**
 * The backfill thread's own catch of an Error in one partition's round, without a broker: the
 * thread goes on (the next round tries the partition again) and the Error is counted as a thread
 * death in the guard (the ThreadDeaths metric), with the backfill's last error naming it.
 */
class BackfillThreadTest {

    @Test
    void anErrorOfOnePartitionIsCountedAndTheThreadGoesOn() throws Exception {
        ThreadGuard guard = new ThreadGuard(() -> false);
        AtomicBoolean closed = new AtomicBoolean();
        AtomicInteger rounds = new AtomicInteger();
        Backfill.Host host = new Backfill.Host() {
            @Override
            public MetadataStore store() {
                return null;
            }

            @Override
            public MetadataConsumer consumer() {
                return null;
            }

            @Override
            public Admin admin() {
                return null;
            }

            @Override
            public KafkaProducer<byte[], byte[]> producer() {
                return null;
            }

            @Override
            public boolean leads(TopicIdPartition tp) {
                // the first round of the partition dies of an Error, the second ends the test
                if (rounds.incrementAndGet() == 1) {
                    throw new StackOverflowError("a round of " + tp);
                }
                closed.set(true);
                return false;
            }

            @Override
            public int knownLeaderEpoch(TopicIdPartition tp) {
                return -1;
            }

            @Override
            public Semaphore writeLock(TopicIdPartition tp) {
                return new Semaphore(1);
            }

            @Override
            public boolean closed() {
                return closed.get();
            }

            @Override
            public void caught(Error e) {
                guard.caught(RlmetaRemoteLogMetadataManager.BACKFILL_THREAD, e);
            }
        };
        Backfill b = new Backfill(host, "__remote_log_metadata", 1, Map.of(Backfill.CHECK_MS, "100"), 1000);
        TopicIdPartition tp = new TopicIdPartition(Uuid.randomUuid(), 0, "t");
        b.leadershipChanged(Set.of(tp), Set.of());
        Thread t = guard.newThread(RlmetaRemoteLogMetadataManager.BACKFILL_THREAD, b);
        t.start();
        t.join(10_000);
        assertFalse(t.isAlive(), "the thread ends when the plugin closes");
        assertEquals(2, rounds.get(), "the partition was tried again after the Error, on the same run of the thread");
        assertEquals(1, guard.deaths(), "the caught Error is counted in ThreadDeaths");
        assertTrue(guard.lastDeath().contains("StackOverflowError"), guard.lastDeath());
        assertTrue(b.lastError().contains("StackOverflowError"), b.lastError());
    }
}
