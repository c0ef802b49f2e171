package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/**
 * One real Kafka node (controller and broker in one JVM) on aarch64: Debian's arm64 OpenJDK run by
 * qemu-user (rlmeta.arm64.launcher: the command that runs that java, `make test-aarch64-broker`
 * gives it), the plugin loaded from the one jar by remote.log.metadata.manager.class.path. The node
 * must load the jar's linux-aarch64 native (the plugin's configure line names it, and the library
 * it extracted is an AArch64 ELF file); a tiered topic's segments are uploaded, each with
 * COPY_SEGMENT_FINISHED in __remote_log_metadata, and every record is read back from offset 0
 * after the local copies are deleted; the node restarts, the plugin initializes again from the
 * topic, and every record is read back from offset 0 again. The test's own clients run on this
 * (x86_64) JVM. Prints one "[aarch64-broker] PASS|FAIL ..." line.
 */
class Aarch64BrokerTest {
    /** emulated JIT is slow: every wait is bounded, but generously */
    private static final Duration WAIT = Duration.ofMinutes(8);
    private static final int RECORDS = 160;
    private static final int EM_AARCH64 = 183;
    private static final List<String> LINKAGE_ERRORS = List.of("NoClassDefFoundError", "NoSuchMethodError",
            "UnsatisfiedLinkError", "UnsupportedPlatformError", "ClassNotFoundException");

    @Test
    void thePluginOnAnAarch64Broker() throws Exception {
        String launcher = System.getProperty("rlmeta.arm64.launcher", "");
        if (launcher.isBlank()) {
            throw new IllegalStateException("rlmeta.arm64.launcher is not set (make test-aarch64-broker)");
        }
        long t0 = System.nanoTime();
        StringBuilder steps = new StringBuilder();
        String topic = "arm";
        try {
            String what = scenario(List.of(launcher.trim().split("\\s+")), topic, t0, steps);
            System.out.printf("[aarch64-broker] PASS in %d s: %s [at s:%s]%n", secondsSince(t0), what, steps);
        } catch (Throwable e) {
            System.out.printf("[aarch64-broker] FAIL after %d s [at s:%s]: %s%n", secondsSince(t0), steps, e);
            throw e;
        }
    }

    private static String scenario(List<String> launcher, String topic, long t0, StringBuilder steps)
            throws Exception {
        try (KafkaCluster c = KafkaCluster.single("aarch64", KafkaCluster.Rlmm.PLUGIN_CLASS_PATH, Map.of(),
                KafkaVersion.current()).launcher(launcher, WAIT).start(); Admin admin = c.admin()) {
            step(steps, "started", t0);
            KafkaCluster.await("the plugin initialized", WAIT,
                    () -> !c.logLines(1, "rlmeta RLMM initialized on broker 1").isEmpty());
            List<String> configured = c.logLines(1, "rlmeta RLMM configured on broker 1");
            assertEquals(1, configured.size(), "configure() lines " + configured);
            String line = configured.get(0);
            assertTrue(line.contains("native dev/rlmeta/native/linux-aarch64/librlmeta_c-")
                    && line.contains("(os.arch aarch64)"), "not the jar's aarch64 native: " + line);
            Path lib = extractedLibrary(c);
            assertEquals(EM_AARCH64, elfMachine(lib), lib + " is not an AArch64 ELF library");
            step(steps, "initialized", t0);

            Uuid id = Tiered.create(admin, topic, 1, 1, Tiered.topicConfigs());
            Tiered.produce(c.bootstrap(), topic, 1, 0, RECORDS);
            Tiered.awaitTiered(c, admin, topic, 1, 3, WAIT);
            Set<String> copied = journal(c, topic);
            KafkaCluster.await("COPY_SEGMENT_FINISHED of every upload", WAIT,
                    () -> copyFinished(c, id).containsAll(copied));
            int read = Tiered.consumeAllAndCheck(c.bootstrap(), topic, 1, 0, RECORDS, WAIT);
            step(steps, "tiered+read", t0);

            assertTrue(c.stopBroker(1), "the node did not stop cleanly");
            c.restartBroker(1);
            KafkaCluster.await("the plugin initialized again", WAIT,
                    () -> c.logLines(1, "rlmeta RLMM initialized on broker 1").size() >= 2);
            int again = Tiered.consumeAllAndCheck(c.bootstrap(), topic, 1, 0, RECORDS, WAIT);
            step(steps, "restarted+read", t0);
            for (String e : LINKAGE_ERRORS) {
                List<String> lines = c.logLines(1, e);
                assertTrue(lines.isEmpty(), e + " in the node's log: " + lines);
            }
            return String.format("Kafka %s on the arm64 JVM under qemu, plugin by class.path loaded %s (ELF machine "
                    + "AArch64); %d uploads, each COPY_SEGMENT_FINISHED; %d records read from offset 0; restarted, "
                    + "initialized again, %d records read from offset 0", c.kafka(), lib.getFileName(), copied.size(),
                    read, again);
        }
    }

    /** The one library the node extracted from the jar (-Drlmeta.extract.dir is the node's native/). */
    private static Path extractedLibrary(KafkaCluster c) throws IOException {
        try (Stream<Path> files = Files.walk(c.work().resolve("node-1").resolve("native"))) {
            List<Path> libs = files.filter(f -> f.getFileName().toString().matches("librlmeta_c-.*\\.so"))
                    .collect(Collectors.toList());
            assertEquals(1, libs.size(), "extracted libraries " + libs);
            return libs.get(0);
        }
    }

    /** e_machine of an ELF64 little-endian file (bytes 18..19). */
    private static int elfMachine(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] h = in.readNBytes(20);
            assertTrue(h.length == 20 && h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F',
                    file + " is not an ELF file");
            return (h[18] & 0xff) | (h[19] & 0xff) << 8;
        }
    }

    private static Set<String> journal(KafkaCluster c, String topic) {
        return c.journal().stream().filter(l -> l.startsWith("COPY ") && l.contains(":" + topic + "-"))
                .map(l -> l.split(" ")[2]).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Segment ids with a COPY_SEGMENT_FINISHED update (api key 1, state 1) in __remote_log_metadata. */
    private static Set<String> copyFinished(KafkaCluster c, Uuid topicId) {
        return MetaTopic.read(c.bootstrap()).stream()
                .filter(r -> r.isFor(topicId.toString()) && r.apiKey() == 1 && r.state() == 1)
                .map(r -> r.record().get("remoteLogSegmentId").get("id").asText()).collect(Collectors.toSet());
    }

    private static void step(StringBuilder steps, String what, long t0) {
        steps.append(' ').append(what).append(' ').append(secondsSince(t0));
    }

    private static long secondsSince(long t0) {
        return (System.nanoTime() - t0) / 1_000_000_000L;
    }
}
