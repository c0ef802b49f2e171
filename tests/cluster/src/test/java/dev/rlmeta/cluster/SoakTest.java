package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;


import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

import dev.rlmeta.cluster.KafkaCluster.Rlmm;

/**
 * The plugin's fault campaign (issue 19 item 6; {@code make soak SOAK_MINUTES=30 SOAK_SEED=...}, and
 * {@code make soak-test}: 3 minutes, a fixed seed, in make test). One real KRaft cluster of Kafka
 * 4.4.0 (a controller and 3 brokers with the plugin: brokers 1 and 2 by class.path, broker 3 from
 * libs/; the file RSM) under steady produce load and retention on two tiered topics (16 KiB
 * segments), while faults drawn from a seeded schedule hit it every few seconds: kill -9 of a
 * broker, SIGTERM and restart, preferred-leader elections, reassignments, SIGSTOP/SIGCONT pauses,
 * a compaction of the metadata topic with aggressive cleaner settings, a restart of all brokers.
 * The schedule deals the kinds like a shuffled deck, so every kind comes once in each 7 faults.
 *
 * <p>Every minute and at the end, with the producers paused and remote storage quiet, it checks
 * ClusterChecks' invariants: every acknowledged record readable from its log start; each broker's
 * store equal to Kafka's own replay of the topic (KafkaReplay: the stock classes of the brokers' version) for every
 * partition it replicates; finished segments never overlapping; nothing DELETE_SEGMENT_STARTED;
 * the file RSM's directories and the metadata agreeing. It prints the faults injected and
 * survived by kind, the records produced and verified, the checks passed, and any violation with
 * its seed; it fails on the first violation (a fault the cluster did not recover from counts).
 */
class SoakTest {
    enum Fault { KILL9, TERM_RESTART, PREFERRED_ELECTION, REASSIGN, PAUSE, COMPACT_METADATA, RESTART_ALL }

    /** The two topics: name, partitions, replication factor (3: reordered by reassignments; 2: moved). */
    record Topic(String name, int partitions, int rf) {}

    static final List<Topic> TOPICS = List.of(new Topic("soak-x", 3, 3), new Topic("soak-y", 2, 2));
    static final Duration CHECK_EVERY = Duration.ofSeconds(60);

    KafkaCluster c;
    Admin admin;
    Random random;
    long seed;
    final Map<String, Uuid> ids = new HashMap<>();
    final Map<Fault, int[]> faults = new EnumMap<>(Fault.class); // kind -> {injected, survived}
    int checks;
    long verified;
    final List<Fault> deck = new ArrayList<>();

    static void say(String fmt, Object... args) {
        System.out.printf("[soak] " + fmt + "%n", args);
        System.out.flush();
    }

    @Test
    void faultCampaign() throws Exception {
        double minutes = Double.parseDouble(System.getProperty("rlmeta.soak.minutes", "3"));
        seed = Long.parseLong(System.getProperty("rlmeta.soak.seed", "19"));
        random = new Random(seed);
        for (Fault f : Fault.values()) {
            faults.put(f, new int[2]);
        }
        c = new KafkaCluster("soak", 3, Map.of(1, Rlmm.PLUGIN_CLASS_PATH, 2, Rlmm.PLUGIN_CLASS_PATH, 3, Rlmm.PLUGIN_LIBS),
                Map.of()).start();
        admin = c.admin();
        List<ClusterChecks.BackgroundProducer> producers = new ArrayList<>();
        String violation = null;
        long t0 = System.nanoTime();
        try {
            for (Topic t : TOPICS) {
                Map<String, String> cfg = new HashMap<>(Tiered.topicConfigs());
                cfg.put("min.insync.replicas", "2");
                cfg.put("retention.bytes", "49152");
                ids.put(t.name(), Tiered.create(admin, t.name(), t.partitions(), t.rf(), cfg));
                producers.add(new ClusterChecks.BackgroundProducer(c.bootstrap(), t.name(), t.partitions(), 20));
            }
            say("seed %d, %.1f minutes: 3 brokers (plugin by class.path on 1 and 2, libs/ on 3), topics %s, a record every "
                    + "20 ms to each", seed, minutes, TOPICS);
            long end = t0 + (long) (minutes * 60e9);
            long lastCheck = System.nanoTime();
            int n = 0;
            while (System.nanoTime() < end && violation == null) {
                Thread.sleep(2000 + random.nextInt(4000));
                Fault f = nextFault();
                n++;
                faults.get(f)[0]++;
                long f0 = System.nanoTime();
                String what;
                try {
                    what = inject(f);
                    for (int b : c.brokerIds()) {
                        assertTrue(c.isAlive(b), "broker " + b + " is not running after the fault");
                    }
                    faults.get(f)[1]++;
                    say("t=%4ds fault %d %s: %s (%d ms)", elapsed(t0), n, f, what, (System.nanoTime() - f0) / 1_000_000);
                } catch (Exception | AssertionError e) {
                    violation = String.format("seed %d, t=%ds, fault %d %s not survived: %s", seed, elapsed(t0), n, f, e);
                    break;
                }
                if (System.nanoTime() - lastCheck >= CHECK_EVERY.toNanos() && System.nanoTime() < end) {
                    violation = check(producers, t0, "after fault " + n);
                    lastCheck = System.nanoTime();
                }
            }
            if (violation == null) {
                violation = check(producers, t0, "at the end");
            }
        } finally {
            for (ClusterChecks.BackgroundProducer p : producers) {
                p.close();
            }
            long sent = producers.stream().mapToLong(p -> p.sent.get()).sum();
            long acked = producers.stream().mapToLong(p -> p.acked.size()).sum();
            Map<Fault, String> byKind = new TreeMap<>();
            faults.forEach((k, v) -> byKind.put(k, v[0] + "/" + v[1]));
            say("seed %d, %d s: faults injected/survived by kind %s; records produced %d (acknowledged %d), verified %d "
                    + "(read back over the checks); checks passed %d; violations: %s", seed, elapsed(t0), byKind, sent,
                    acked, verified, checks, violation == null ? "none" : violation);
            admin.close();
            c.close();
        }
        if (violation != null) {
            fail("VIOLATION " + violation);
        }
    }

    static long elapsed(long t0) {
        return (System.nanoTime() - t0) / 1_000_000_000L;
    }

    Fault nextFault() {
        if (deck.isEmpty()) {
            deck.addAll(List.of(Fault.values()));
            Collections.shuffle(deck, random);
        }
        return deck.remove(deck.size() - 1);
    }

    int randomBroker() {
        return c.brokerIds().get(random.nextInt(c.brokerIds().size()));
    }

    String inject(Fault f) throws Exception {
        switch (f) {
            case KILL9 -> {
                int b = randomBroker();
                long down = 1000 + random.nextInt(4000);
                c.killBroker(b);
                Thread.sleep(down);
                c.restartBroker(b);
                return "broker " + b + " killed (-9), restarted after " + down + " ms";
            }
            case TERM_RESTART -> {
                int b = randomBroker();
                boolean clean = c.stopBroker(b);
                c.restartBroker(b);
                return "broker " + b + " stopped (SIGTERM, " + (clean ? "clean" : "killed after 60 s") + ") and restarted";
            }
            case PREFERRED_ELECTION -> {
                return "preferred-leader election: " + electPreferred(allPartitions());
            }
            case REASSIGN -> {
                Topic t = TOPICS.get(random.nextInt(TOPICS.size()));
                int p = random.nextInt(t.partitions());
                TopicPartition tp = new TopicPartition(t.name(), p);
                List<Integer> before = replicas(tp);
                List<Integer> target;
                do { // another replica set, or the same one in another order (another preferred leader)
                    List<Integer> brokers = new ArrayList<>(c.brokerIds());
                    Collections.shuffle(brokers, random);
                    target = List.copyOf(brokers.subList(0, t.rf()));
                } while (target.equals(before));
                ClusterChecks.reassign(admin, Map.of(tp, target), Duration.ofSeconds(120));
                return tp + " reassigned " + before + " -> " + target + ", then " + electPreferred(Set.of(tp));
            }
            case PAUSE -> {
                int b = randomBroker();
                long ms = 2000 + random.nextInt(10_000);
                long pid = c.pid(b);
                signal("STOP", pid);
                try {
                    Thread.sleep(ms);
                } finally {
                    signal("CONT", pid);
                }
                return "broker " + b + " paused (SIGSTOP) for " + ms + " ms, then SIGCONT";
            }
            case COMPACT_METADATA -> {
                long before = ClusterChecks.removedByCleaner(c.bootstrap());
                long after = before;
                ClusterChecks.alter(admin, MetaTopic.NAME, ClusterChecks.FAST_CLEANER);
                try {
                    long deadline = System.nanoTime() + 45_000_000_000L;
                    while (after <= before && System.nanoTime() < deadline) {
                        Thread.sleep(3000);
                        after = ClusterChecks.removedByCleaner(c.bootstrap());
                    }
                } finally {
                    ClusterChecks.unset(admin, MetaTopic.NAME, ClusterChecks.FAST_CLEANER.keySet());
                }
                return MetaTopic.NAME + " under " + ClusterChecks.FAST_CLEANER + (after > before
                        ? ": the log cleaner removed " + (after - before) + " more record(s)"
                        : ": the cleaner removed nothing more within 45 s") + ", overrides removed";
            }
            case RESTART_ALL -> {
                List<Integer> order = new ArrayList<>(c.brokerIds());
                Collections.shuffle(order, random);
                List<String> stops = new ArrayList<>();
                for (int b : order) {
                    stops.add(b + (c.stopBroker(b) ? "" : " (killed after 60 s)"));
                }
                for (int b : c.brokerIds()) {
                    c.restartBroker(b);
                }
                return "all brokers stopped (SIGTERM, in order " + stops + ") and restarted";
            }
            default -> throw new IllegalStateException(f.toString());
        }
    }

    static void signal(String sig, long pid) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new IllegalStateException("kill -" + sig + " " + pid + " failed");
        }
    }

    Set<TopicPartition> allPartitions() {
        Set<TopicPartition> out = new HashSet<>();
        for (Topic t : TOPICS) {
            for (int p = 0; p < t.partitions(); p++) {
                out.add(new TopicPartition(t.name(), p));
            }
        }
        return out;
    }

    /** A preferred-leader election; per-partition refusals (not needed, not available) are Kafka's answers, not faults. */
    String electPreferred(Set<TopicPartition> tps) throws Exception {
        Map<TopicPartition, Optional<Throwable>> result = admin.electLeaders(ElectionType.PREFERRED, tps).partitions()
                .get(60, TimeUnit.SECONDS);
        long elected = result.values().stream().filter(Optional::isEmpty).count();
        return elected + " of " + tps.size() + " partition(s) moved to their preferred leader";
    }

    List<Integer> replicas(TopicPartition tp) throws Exception {
        TopicDescription d = Tiered.describe(admin, tp.topic());
        return d.partitions().get(tp.partition()).replicas().stream().map(n -> n.id()).toList();
    }

    /** Pauses the producers, waits for quiet, checks every invariant, resumes; returns a violation or null. */
    String check(List<ClusterChecks.BackgroundProducer> producers, long t0, String when) {
        long k0 = System.nanoTime();
        try {
            for (ClusterChecks.BackgroundProducer p : producers) {
                p.pause();
            }
            ClusterChecks.awaitQuiet(c, Duration.ofSeconds(6), Duration.ofSeconds(180));
            for (int b : c.brokerIds()) {
                ClusterChecks.awaitCaughtUp(c, admin, b, Duration.ofSeconds(90));
            }
            Thread.sleep(2500); // the dumps are rewritten at most once a second
            // the truth: Kafka's own replay of the topic, with the stock classes of the brokers' version
            int lookups = ClusterChecks.judgeByKafka(c, c.brokerIds(), new HashSet<>(ids.values()), true);
            KafkaReplay truth = new KafkaReplay(c.kafka(), MetaTopic.read(c.bootstrap()));
            int segments = 0;
            int startedOnly = 0;
            int remote = 0;
            long read = 0;
            for (int i = 0; i < TOPICS.size(); i++) {
                Topic t = TOPICS.get(i);
                Uuid id = ids.get(t.name());
                for (int p = 0; p < t.partitions(); p++) {
                    String where = t.name() + "-" + p;
                    List<String> ref = truth.segments(id.toString(), p);
                    int[] n = ClusterChecks.checkSegments(where + " (Kafka's replay)", ref);
                    segments += n[0];
                    startedOnly += n[1];
                    remote += ClusterChecks.checkRemoteAgrees(c, t.name(), p, ref);
                    for (int b : replicas(new TopicPartition(t.name(), p))) {
                        assertTrue(ClusterChecks.partitionsHeld(ClusterChecks.dump(c, b).get("store"), id).contains(p),
                                where + ": replica broker " + b + " does not hold it");
                    }
                }
                read += ClusterChecks.checkAcknowledgedReadable(c.bootstrap(), t.name(), t.partitions(),
                        producers.get(i).acked, -1);
            }
            verified += read;
            checks++;
            say("t=%4ds check %d (%s) passed in %d s: %d records read back from the log starts (every acknowledged one "
                            + "there), %d segments in Kafka's replay equal to every replica's cache (%d lookups compared; %d started-only, "
                            + "covered), no overlap, none DELETE_SEGMENT_STARTED, %d remote directories all in the metadata",
                    elapsed(t0), checks, when, (System.nanoTime() - k0) / 1_000_000_000L, read, segments, lookups, startedOnly,
                    remote);
            for (ClusterChecks.BackgroundProducer p : producers) {
                p.resume();
            }
            return null;
        } catch (Exception | AssertionError e) {
            return String.format("seed %d, t=%ds, check %s failed: %s", seed, elapsed(t0), when, e);
        }
    }

}
