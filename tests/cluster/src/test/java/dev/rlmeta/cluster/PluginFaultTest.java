package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RetriableRemoteStorageException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.RlMeta;
import dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager;
import dev.rlmeta.kafka.TestHooks;

/**
 * The plugin never serves a silently wrong cache, and leaks nothing: faults injected into a live
 * instance (in this JVM, against a real Kafka 4.4.0 broker) through its test hooks, which need
 * -Drlmeta.test.hooks=true (set for this test JVM only by tests/cluster/pom.xml).
 *
 * <p>Each fault: an apply that throws, a panic inside the native store (poisoning it), an Error
 * that ends the consumer thread. Each time the partition must stop answering (isReady false,
 * ReplicaNotAvailableException) while the recovery is held, then be rebuilt, with every record
 * written before and during the fault, and equal to a fresh instance's replay of the topic.
 * Then: lookups answer while the consumer is in the middle of applying a large poll batch, and
 * closing at random moments of the start leaks no thread, client or native store. Then (issue 31):
 * a poison record replays and stops its metadata partition alone while another one serves
 * throughout, and an Error in each of the other threads is logged, counted and survived.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PluginFaultTest {
    static final String META = "__remote_log_metadata";
    static final Duration LIMIT = Duration.ofSeconds(60);
    static KafkaCluster cluster;
    static Admin admin;
    static Path work;
    static RlmetaRemoteLogMetadataManager rlmm;
    static TestHooks hooks;
    static TopicIdPartition tp;
    static final List<Uuid> written = new ArrayList<>();
    static long nextStart;

    static Map<String, Object> configs(String name) {
        // consume.wait.ms far above the waits below: a write future that fails here failed for its own
        // reason, not a timeout
        Map<String, Object> c = PluginApiTest.rlmmConfigs(cluster, work, "rlmeta-fault-test-" + name, 180_000);
        c.put("remote.log.metadata.consumer.max.poll.records", "5000");
        return c;
    }

    @BeforeAll
    static void start() throws Exception {
        cluster = new KafkaCluster("fault", 1, Map.of(), Map.of("remote.log.storage.system.enable", "false")).start();
        admin = cluster.admin();
        work = Files.createDirectories(cluster.work().resolve("rlmm-fault"));
        Uuid id = Tiered.create(admin, "fault-t", 1, 1, Map.of());
        tp = new TopicIdPartition(id, 0, "fault-t");
        rlmm = new RlmetaRemoteLogMetadataManager();
        rlmm.configure(configs("main"));
        hooks = rlmm.testHooks();
        rlmm.onPartitionLeadershipChanges(Set.of(tp), Set.of());
        KafkaCluster.await(tp + " ready", LIMIT, () -> rlmm.isReady(tp));
        // as Kafka's copy task does before its first copy: the plugin learns this leader's epoch
        rlmm.highestOffsetForEpoch(tp, 0);
        write(); // one segment before any fault
    }

    @AfterAll
    static void stop() throws Exception {
        if (hooks != null) {
            hooks.releaseRecovery();
            hooks.beforeApply(null);
        }
        if (rlmm != null) {
            rlmm.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    static RemoteLogSegmentMetadata copyStarted(Uuid segmentId, long start, long end) {
        return new RemoteLogSegmentMetadata(new RemoteLogSegmentId(tp, segmentId), start, end, 1_700_000_000_000L,
                100, System.currentTimeMillis(), 4096, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED,
                Map.of(0, start));
    }

    static RemoteLogSegmentMetadataUpdate finished(Uuid segmentId) {
        return new RemoteLogSegmentMetadataUpdate(new RemoteLogSegmentId(tp, segmentId), System.currentTimeMillis(),
                Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 100);
    }

    /** Adds and finishes the next segment (100 offsets), waiting for both; returns its id. */
    static Uuid write() throws Exception {
        Uuid s = Uuid.randomUuid();
        rlmm.addRemoteLogSegmentMetadata(copyStarted(s, nextStart, nextStart + 99)).get(60, TimeUnit.SECONDS);
        rlmm.updateRemoteLogSegmentMetadata(finished(s)).get(60, TimeUnit.SECONDS);
        written.add(s);
        nextStart += 100;
        return s;
    }

    static Throwable failure(CompletableFuture<Void> f) throws InterruptedException {
        try {
            f.get(60, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("a future of the plugin did not complete within 60 s");
        }
    }

    static List<Uuid> listed(RlmetaRemoteLogMetadataManager m) throws Exception {
        List<Uuid> ids = new ArrayList<>();
        m.listRemoteLogSegments(tp).forEachRemaining(s -> ids.add(s.remoteLogSegmentId().id()));
        return ids;
    }

    static String storeDump(String dump) {
        int at = dump.indexOf("\"store\":");
        assertTrue(at >= 0, "dump without a store section: " + dump);
        return dump.substring(at);
    }

    /** The store a fresh instance rebuilds from the topic alone. */
    static String freshReplay(String name) throws Exception {
        RlmetaRemoteLogMetadataManager fresh = new RlmetaRemoteLogMetadataManager();
        try {
            fresh.configure(configs(name));
            fresh.onPartitionLeadershipChanges(Set.of(tp), Set.of());
            KafkaCluster.await(tp + " ready on a fresh instance", LIMIT, () -> fresh.isReady(tp));
            return storeDump(fresh.dumpJson());
        } finally {
            fresh.close();
        }
    }

    /** Unavailable now: not ready, and every lookup throws Kafka's retriable ReplicaNotAvailableException. */
    static void assertUnavailable(String when) {
        assertFalse(rlmm.isReady(tp), when + ": isReady");
        assertThrows(ReplicaNotAvailableException.class, () -> rlmm.remoteLogSegmentMetadata(tp, 0, 50), when);
        assertThrows(ReplicaNotAvailableException.class, () -> rlmm.listRemoteLogSegments(tp), when);
        assertThrows(ReplicaNotAvailableException.class, () -> rlmm.highestOffsetForEpoch(tp, 0), when);
    }

    /** Serving again, with every segment written so far, and equal to a fresh replay of the topic. */
    static void assertRebuiltAndComplete(String fault, String freshName) throws Exception {
        KafkaCluster.await(tp + " ready again after " + fault, LIMIT, () -> rlmm.isReady(tp));
        assertEquals(written, listed(rlmm), "segments after the rebuild (" + fault + ")");
        assertEquals(Optional.of(nextStart - 1), rlmm.highestOffsetForEpoch(tp, 0));
        assertEquals(freshReplay(freshName), storeDump(rlmm.dumpJson()), "the rebuilt store vs a fresh replay (" + fault + ")");
    }

    @Test
    @Order(1)
    void aFailedApplyStopsServingAndRebuildsInsteadOfSkipping() throws Exception {
        long rebuilds = rlmm.rebuilds();
        hooks.holdRecovery();
        hooks.failNextApply();
        Uuid s = Uuid.randomUuid();
        CompletableFuture<Void> f = rlmm.addRemoteLogSegmentMetadata(copyStarted(s, nextStart, nextStart + 99));
        KafkaCluster.await("the partition to stop answering after the failed apply", LIMIT, () -> !rlmm.isReady(tp));
        assertUnavailable("after a failed apply");
        assertFalse(f.isDone(), "the write's future completed though its record was never applied");
        hooks.releaseRecovery();
        f.get(60, TimeUnit.SECONDS); // completes once the rebuild has applied the record
        rlmm.updateRemoteLogSegmentMetadata(finished(s)).get(60, TimeUnit.SECONDS);
        written.add(s);
        nextStart += 100;
        assertRebuiltAndComplete("a failed apply", "fresh-1");
        assertEquals(rebuilds + 1, rlmm.rebuilds());
        System.out.printf("[fault] apply throws: %s unavailable (isReady false, ReplicaNotAvailableException), the write "
                + "pending; then rebuilt from the topic: %d segment(s), equal to a fresh replay%n", tp, written.size());
    }

    @Test
    @Order(2)
    void aPanicInTheCorePoisonsTheStoreWhichIsDroppedAndRebuilt() throws Exception {
        long rebuilds = rlmm.rebuilds();
        hooks.holdRecovery();
        hooks.panicInStore();
        assertUnavailable("after a panic in the native store");
        CompletableFuture<Void> refused = rlmm.addRemoteLogSegmentMetadata(copyStarted(Uuid.randomUuid(), nextStart,
                nextStart + 99));
        Throwable t = failure(refused);
        assertInstanceOf(RetriableRemoteStorageException.class, t, "a write while the store is unusable: " + t);
        hooks.releaseRecovery();
        assertRebuiltAndComplete("a panic in the core", "fresh-2");
        assertEquals(rebuilds + 1, rlmm.rebuilds());
        write(); // and it takes writes again
        assertEquals(written, listed(rlmm));
        System.out.printf("[fault] panic in the core: store poisoned, %s unavailable, a write refused retriably (%s); "
                + "then a fresh store rebuilt from the topic, equal to a fresh replay, writable%n", tp,
                t.getClass().getSimpleName());
    }

    @Test
    @Order(3)
    void anErrorEndsTheConsumerThreadFailsPendingWritesAndARestartRebuilds() throws Exception {
        long restarts = rlmm.consumerRestarts();
        String before = hooks.consumerThread();
        hooks.holdRecovery();
        hooks.errorOnNextApply();
        Uuid s = Uuid.randomUuid();
        CompletableFuture<Void> f = rlmm.addRemoteLogSegmentMetadata(copyStarted(s, nextStart, nextStart + 99));
        // the pending write fails at once (not after consume.wait.ms, 180 s here), retriably, saying why
        Throwable t = failure(f);
        assertInstanceOf(RetriableRemoteStorageException.class, t, "the pending write: " + t);
        assertTrue(t.getMessage().contains("died"), t.getMessage());
        assertUnavailable("after the consumer thread died");
        hooks.releaseRecovery();
        // the record was produced before the thread died: the restarted thread's rebuild applies it
        written.add(s);
        KafkaCluster.await(tp + " ready again after the restart", LIMIT, () -> rlmm.isReady(tp));
        rlmm.updateRemoteLogSegmentMetadata(finished(s)).get(60, TimeUnit.SECONDS);
        nextStart += 100;
        assertRebuiltAndComplete("an Error in the consumer thread", "fresh-3");
        assertEquals(restarts + 1, rlmm.consumerRestarts());
        assertNotEquals(before, hooks.consumerThread(), "the consumer thread was not replaced");
        System.out.printf("[fault] Error in the consumer thread: the pending write failed at once (%s: %s); %s "
                + "unavailable; a new thread (%s, was %s) rebuilt the store with the write in it, equal to a fresh replay%n",
                t.getClass().getSimpleName(), t.getMessage(), tp, hooks.consumerThread(), before);
    }

    @Test
    @Order(4)
    void lookupsAnswerWhileALargeBatchIsBeingApplied() throws Exception {
        int mp = RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), 3);
        int chunk = hooks.applyChunk();
        int filler = 4 * chunk + 100;
        CountDownLatch midBatch = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicInteger largest = new AtomicInteger();
        hooks.beforeApply((p, from, batch) -> {
            largest.accumulateAndGet(batch, Math::max);
            if (p == mp && from > 0 && midBatch.getCount() > 0) { // part of a large batch applied, the rest not yet
                midBatch.countDown();
                try {
                    resume.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        try {
            // records that change nothing (tombstones of keys no segment has), produced in one request, so
            // that one poll returns them as one batch
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
            p.put(ProducerConfig.LINGER_MS_CONFIG, "60000");
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(4 << 20));
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                    new ByteArraySerializer())) {
                for (int i = 0; i < filler; i++) {
                    producer.send(new ProducerRecord<>(META, mp, ("fault-filler-" + i).getBytes(StandardCharsets.UTF_8),
                            null));
                }
                producer.flush();
            }
            assertTrue(midBatch.await(60, TimeUnit.SECONDS), "the consumer never applied a batch in more than one "
                    + "chunk (largest batch " + largest.get() + " records)");
            // the consumer is now inside the apply of that batch: lookups from other threads still answer
            CompletableFuture<List<Uuid>> read = CompletableFuture.supplyAsync(() -> {
                try {
                    assertTrue(rlmm.isReady(tp));
                    assertEquals(written.get(0), rlmm.remoteLogSegmentMetadata(tp, 0, 50).orElseThrow()
                            .remoteLogSegmentId().id());
                    return listed(rlmm);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            List<Uuid> seen;
            try {
                seen = read.get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("lookups blocked while the consumer was applying a batch");
            }
            assertEquals(written, seen);
            assertFalse(resume.getCount() == 0, "the apply was released before the lookups answered");
            System.out.printf("[fault] lookups answered while the consumer was in the middle of a %d-record batch "
                    + "(applied in chunks of %d)%n", largest.get(), chunk);
        } finally {
            resume.countDown();
            hooks.beforeApply(null);
        }
        write(); // the consumer goes on
    }

    @Test
    @Order(5)
    void configureTwiceIsRefused() throws Exception {
        RlmetaRemoteLogMetadataManager m = new RlmetaRemoteLogMetadataManager();
        m.configure(configs("twice"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> m.configure(configs("twice")));
        assertTrue(e.getMessage().contains("already"), e.getMessage());
        m.close();
        assertThrows(IllegalStateException.class, () -> m.configure(configs("twice")));
        System.out.println("[life] configure() twice: " + e.getMessage());
    }

    static Set<String> pluginThreads() {
        Set<String> names = new TreeSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (t.isAlive() && (n.startsWith("Rlmeta") || n.startsWith("kafka-producer-network-thread")
                    || n.startsWith("kafka-admin-client-thread") || n.startsWith("consumer_background_thread"))) {
                names.add(n + "#" + t.getId());
            }
        }
        return names;
    }

    /** Every Kafka client registered in this JVM (each registers its app-info MBean until closed). */
    static Set<ObjectName> clients() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> all = new TreeSet<>();
        for (String domain : List.of("kafka.producer", "kafka.consumer", "kafka.admin.client")) {
            all.addAll(server.queryNames(new ObjectName(domain + ":type=app-info,*"), null));
        }
        return all;
    }

    @Test
    @Order(6)
    void closeAtAnyMomentOfTheStartLeaksNoThreadClientOrStore() throws Exception {
        rlmm.close(); // the instance of the tests above, so that nothing of this class is left
        rlmm = null;
        hooks = null;
        Set<String> threadsBefore = pluginThreads();
        Set<ObjectName> clientsBefore = clients();
        long storesBefore = MetadataStore.liveStores();
        long seed = System.nanoTime();
        Random random = new Random(seed);
        String[] steps = {"admin created", "consumer created", "producer created", "all initialized"};
        Map<String, Integer> reached = new TreeMap<>();
        int runs = 50;
        for (int i = 0; i < runs; i++) {
            RlmetaRemoteLogMetadataManager m = new RlmetaRemoteLogMetadataManager();
            m.configure(configs("life-" + i));
            if (random.nextBoolean()) {
                m.onPartitionLeadershipChanges(Set.of(tp), Set.of());
            }
            Thread.sleep(random.nextInt(5) == 0 ? 0 : random.nextInt(500)); // a fifth right away, before any client
            String last = "configured";
            for (String step : steps) {
                if (m.startupMillis(step) >= 0) {
                    last = step;
                }
            }
            m.close();
            reached.merge(last, 1, Integer::sum);
        }
        Set<String> threadsAfter = pluginThreads();
        Set<ObjectName> clientsAfter = clients();
        System.out.printf("[life] %d instances closed at random moments of their start (seed %d); last step reached "
                + "when closed: %s; threads before/after %d/%d, clients %d/%d, native stores %d/%d%n", runs, seed,
                reached, threadsBefore.size(), threadsAfter.size(), clientsBefore.size(), clientsAfter.size(),
                storesBefore, MetadataStore.liveStores());
        assertEquals(threadsBefore, threadsAfter, "threads left running");
        assertEquals(clientsBefore, clientsAfter, "Kafka clients left open");
        assertEquals(storesBefore, MetadataStore.liveStores(), "native stores left allocated");
        assertTrue(reached.size() >= 2, "the closes all happened at the same step: " + reached);
    }

    /**
     * Issue 31: a record that fails to apply every time (a poison record) made the plugin drop the
     * whole store and rebuild every metadata partition at once, in a tight loop, every partition
     * unavailable for ever. Now only its metadata partition is replayed, after 200 ms then 400 ms,
     * and at the 3rd failure in a row on the same records it stops: its partitions stay unavailable
     * (a log line with the offsets and the error, the Stopped metric), and a partition of another
     * metadata partition answers every lookup throughout, probed every few milliseconds from before
     * the poison record until after the stop.
     */
    @Test
    @Order(7)
    void aPoisonRecordReplaysOnlyItsMetadataPartitionThenStopsItWhileTheOthersServeThroughout() throws Exception {
        int mp = RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), 3);
        TopicIdPartition other = null;
        for (int p = 1; other == null; p++) {
            TopicIdPartition t = new TopicIdPartition(tp.topicId(), p, tp.topic());
            if (RlMeta.metadataPartition(t.topicId().toString(), p, 3) != mp) {
                other = t;
            }
        }
        TopicIdPartition served = other;
        RlmetaRemoteLogMetadataManager m = new RlmetaRemoteLogMetadataManager();
        List<String> misses = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicBoolean probing = new java.util.concurrent.atomic.AtomicBoolean(true);
        AtomicInteger probes = new AtomicInteger();
        Thread prober = new Thread(() -> {
            while (probing.get()) {
                try {
                    if (!m.isReady(served)) {
                        misses.add("isReady(" + served + ") false");
                    }
                    listed(m, served);
                    m.highestOffsetForEpoch(served, 0);
                } catch (Exception e) {
                    misses.add(e.toString());
                }
                probes.incrementAndGet();
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "poison-prober");
        try (LogCapture logs = LogCapture.start("dev.rlmeta")) {
            m.configure(configs("poison"));
            TestHooks h = m.testHooks();
            m.onPartitionLeadershipChanges(Set.of(), Set.of(tp, served));
            KafkaCluster.await("both partitions ready", LIMIT, () -> m.isReady(tp) && m.isReady(served));
            long before = m.rebuilds();
            prober.start();
            // every apply of tp's metadata partition fails from now on, whatever its records
            h.beforeApply((partition, from, batch) -> {
                if (partition == mp) {
                    throw new IllegalStateException("a poison record (test)");
                }
            });
            // a record in that metadata partition, as another broker writes one
            java.util.Properties pp = new java.util.Properties();
            pp.put("bootstrap.servers", cluster.bootstrap());
            pp.put("linger.ms", "50"); // both records below in one request
            long poisonOffset;
            Uuid servedSegment = Uuid.randomUuid();
            try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> producer =
                         new org.apache.kafka.clients.producer.KafkaProducer<>(pp,
                                 new org.apache.kafka.common.serialization.ByteArraySerializer(),
                                 new org.apache.kafka.common.serialization.ByteArraySerializer())) {
                byte[] value = new org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde()
                        .serialize(copyStarted(Uuid.randomUuid(), 1_000_000, 1_000_099));
                byte[] key = (tp.topicId() + ":" + tp.topic() + ":" + tp.partition() + ":1000099:0")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8); // the topic is compacted: keyed
                // with it, a record of the other metadata partition (likely in the same poll): it is applied
                // although the poison record's metadata partition fails
                RemoteLogSegmentMetadata otherSegment = new RemoteLogSegmentMetadata(new RemoteLogSegmentId(served,
                        servedSegment), 0, 99, 1_700_000_000_000L, 100, System.currentTimeMillis(), 4096, Optional.empty(),
                        RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(0, 0L));
                int servedMp = RlMeta.metadataPartition(served.topicId().toString(), served.partition(), 3);
                var servedSent = producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("__remote_log_metadata",
                        servedMp, (served.topicId() + ":" + served.topic() + ":" + served.partition() + ":99:0")
                                .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        new org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde()
                                .serialize(otherSegment)));
                poisonOffset = producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("__remote_log_metadata",
                        mp, key, value)).get(30, TimeUnit.SECONDS).offset();
                servedSent.get(30, TimeUnit.SECONDS);
            }
            KafkaCluster.await(mp + " stopped", LIMIT, () -> h.stoppedPartitions().contains(mp));
            long rebuilds = m.rebuilds() - before;
            Thread.sleep(3_000);
            probing.set(false);
            prober.join(10_000);
            assertTrue(probes.get() > 50, "too few probes: " + probes.get());
            assertEquals(List.of(), misses.subList(0, Math.min(5, misses.size())), served + " (another metadata "
                    + "partition) stopped answering while " + META + "-" + mp + " was replayed and stopped (" + misses.size()
                    + " of " + probes.get() + " probes)");
            KafkaCluster.await("the other metadata partition's record applied", LIMIT, () -> {
                try {
                    return listed(m, served).contains(servedSegment);
                } catch (Exception e) {
                    return false;
                }
            });
            assertEquals(rebuilds, m.rebuilds() - before, "rebuilds went on after the metadata partition stopped");
            assertEquals(2, rebuilds, "replays of the metadata partition: one after each of the first 2 failures");
            assertFalse(m.isReady(tp), tp + " is served from a stopped metadata partition");
            ReplicaNotAvailableException e = assertThrows(ReplicaNotAvailableException.class, () -> m.listRemoteLogSegments(tp));
            assertTrue(e.getMessage().contains("stopped"), e.getMessage());
            boolean[] stopped = (boolean[]) ManagementFactory.getPlatformMBeanServer().getAttribute(m.mbeanName(), "Stopped");
            for (int p = 0; p < stopped.length; p++) {
                assertEquals(p == mp, stopped[p], "the Stopped metric of metadata partition " + p);
            }
            // the dump (rlmeta.dump.path) lists the stopped metadata partition, its offsets and the error
            String dump = m.dumpJson();
            String stoppedJson = "\"stopped\":[{\"partition\":" + mp + ",\"fromOffset\":";
            assertTrue(dump.contains(stoppedJson) && dump.contains("a poison record (test)"),
                    "the dump does not list " + META + "-" + mp + " as stopped: " + dump.substring(0, Math.min(600,
                            dump.length())));
            List<String> lines = logs.lines();
            String stopLine = lines.stream().filter(l -> l.startsWith("ERROR") && l.contains(META + "-" + mp + " stopped")
                    && l.contains("offset") && l.contains("a poison record (test)")).findFirst()
                    .orElseThrow(() -> new AssertionError("no ERROR line naming the stopped partition, its offsets and "
                            + "the error: " + lines));
            long replayLines = lines.stream().filter(l -> l.contains("is replayed from its beginning in")).count();
            assertEquals(2, replayLines, "log lines announcing a replay: " + lines);
            assertTrue(lines.stream().anyMatch(l -> l.contains("replayed from its beginning in 200 ms"))
                    && lines.stream().anyMatch(l -> l.contains("replayed from its beginning in 400 ms")),
                    "the backoff doubles: " + lines);
            System.out.printf("[fault] a poison record at %s-%d offset %d: %d replays of that metadata partition alone "
                    + "(200 ms, 400 ms), then it stopped (%s unavailable, Stopped metric 1); %s in another metadata "
                    + "partition answered all %d probes meanwhile; the log: %s%n", META, mp, poisonOffset, rebuilds, tp,
                    served, probes.get(), stopLine);
        } finally {
            probing.set(false);
            m.close();
        }
    }

    /**
     * Issue 31: a thread of the plugin that dies of an Error no longer dies silently. For each of the
     * initialization, cleanup-policy refresh, backfill and dump threads: an Error injected into its
     * next round is logged at ERROR with the thread's name, counted (ThreadDeaths), and the thread's
     * work starts again after a backoff: the initialization still makes the manager ready, and
     * each loop reaches its next round (a second injected Error is thrown too, which a dead thread
     * never would).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {RlmetaRemoteLogMetadataManager.INIT_THREAD,
            RlmetaRemoteLogMetadataManager.POLICY_THREAD, RlmetaRemoteLogMetadataManager.BACKFILL_THREAD,
            RlmetaRemoteLogMetadataManager.DUMP_THREAD})
    @Order(8)
    void anErrorInAnotherThreadIsLoggedCountedAndTheThreadRestarts(String name) throws Exception {
        assertTrue(TestHooks.GUARDED_THREADS.contains(name), name);
        {
            Map<String, Object> c = configs("thread-" + name);
            c.put("rlmeta.policy.refresh.ms", "100");
            c.put("rlmeta.backfill.check.ms", "100");
            RlmetaRemoteLogMetadataManager m = new RlmetaRemoteLogMetadataManager();
            try (LogCapture logs = LogCapture.start("dev.rlmeta")) {
                m.configure(c);
                TestHooks h = m.testHooks();
                h.errorInThread(name); // initialization: before it marks the manager ready (a round trip from now)
                m.onPartitionLeadershipChanges(Set.of(tp), Set.of());
                KafkaCluster.await(name + " to throw the injected Error", LIMIT, () -> h.errorsThrown(name) == 1);
                ObjectName mbean = m.mbeanName();
                KafkaCluster.await("ThreadDeaths 1", LIMIT, () -> threadDeaths(mbean) == 1L);
                String line = "ERROR rlmeta RLMM thread " + name + " died of java.lang.Error: an Error injected by a test";
                KafkaCluster.await("the log line", LIMIT, () -> logs.lines().stream().anyMatch(l -> l.startsWith(line)));
                // the work started again: the manager becomes ready and serves, and the loop comes round again
                KafkaCluster.await("the manager initialized and " + tp + " ready after " + name + " died", LIMIT,
                        () -> h.initialized() && m.isReady(tp));
                listed(m, tp); // answers (throws while not served)
                h.errorInThread(name);
                if (name.equals(RlmetaRemoteLogMetadataManager.INIT_THREAD)) {
                    Thread.sleep(500); // the initialization is done: it has no next round
                    assertEquals(1, h.errorsThrown(name), "a finished initialization ran again");
                } else {
                    KafkaCluster.await(name + " to come round again and throw a second Error", LIMIT,
                            () -> h.errorsThrown(name) == 2);
                    KafkaCluster.await("ThreadDeaths 2", LIMIT, () -> threadDeaths(mbean) == 2L);
                }
                String lastError = (String) ManagementFactory.getPlatformMBeanServer().getAttribute(mbean, "LastError");
                assertTrue(lastError != null && lastError.contains(name), "LastError: " + lastError);
                System.out.printf("[thread] %s: an injected Error logged (%s...), counted (ThreadDeaths), the work "
                        + "started again (%s)%n", name, line, name.equals(RlmetaRemoteLogMetadataManager.INIT_THREAD)
                        ? "the manager became ready" : "a second Error thrown on its next round");
            } finally {
                m.close();
            }
        }
    }

    static long threadDeaths(ObjectName mbean) {
        try {
            return (Long) ManagementFactory.getPlatformMBeanServer().getAttribute(mbean, "ThreadDeaths");
        } catch (javax.management.JMException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<Uuid> listed(RlmetaRemoteLogMetadataManager m, TopicIdPartition p) throws Exception {
        List<Uuid> ids = new ArrayList<>();
        m.listRemoteLogSegments(p).forEachRemaining(s -> ids.add(s.remoteLogSegmentId().id()));
        return ids;
    }
}
