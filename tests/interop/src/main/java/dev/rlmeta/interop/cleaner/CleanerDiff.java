package dev.rlmeta.interop.cleaner;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Differential test of rlmeta's compaction model (core/src/compaction.rs) against Kafka 4.4.0's
 * own log cleaner and retention: {@code CleanerDiff N SEED OUTFILE [--first I] [--only I]} generates N random
 * keyed {@code __remote_log_metadata} logs ({@link LogScript}), runs each on a real log directory
 * through {@link KafkaLog} (UnifiedLog + Cleaner, time driven by the script), and writes one
 * {@code "kind": "cleaner"} case per log: the script's operations, each {@code clean} with the
 * offsets Kafka kept. rlmeta's conformance runner replays the same operations into the model and
 * must keep exactly those offsets. Case i depends only on SEED and i; the same arguments give the
 * same file; {@code --first I} starts at case I (for long runs in chunks), {@code --only I} writes
 * case I alone. Statistics go to stdout, the first line being the count.
 */
public final class CleanerDiff {
    private CleanerDiff() {}

    static final HexFormat HEX = HexFormat.of();
    /** {@code CLEANER_DIFF_TRACE=1}: print Kafka's segments (base, bytes, largest timestamp) at every clean. */
    static final boolean TRACE = System.getenv("CLEANER_DIFF_TRACE") != null;
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: CleanerDiff N SEED OUTFILE [--first I] [--only I]");
            System.exit(2);
        }
        int n = Integer.parseInt(args[0]);
        long seed = Long.parseLong(args[1]);
        Path out = Paths.get(args[2]);
        int only = -1, first = 0;
        for (int a = 3; a + 1 < args.length; a += 2) {
            if (args[a].equals("--only")) only = Integer.parseInt(args[a + 1]);
            else if (args[a].equals("--first")) first = Integer.parseInt(args[a + 1]);
        }
        Path work = workDir("rlmeta-cleaner-diff-");
        Map<String, Long> stats = new TreeMap<>();
        ObjectMapper m = new ObjectMapper();
        int written = 0;
        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            w.write("{\n  \"source\": " + m.writeValueAsString(
                    "Kafka 4.4.0's UnifiedLog and Cleaner on a real log directory (dev.rlmeta.interop.cleaner.CleanerDiff "
                            + n + " " + seed + "): the offsets each cleaning keeps") + ",\n  \"cases\": [\n");
            for (int i = first; i < first + n; i++) {
                if (only >= 0 && i != only) continue;
                LogScript script = LogScript.generate(seed, i);
                ObjectNode c = run(script, work, stats);
                if (written++ > 0) w.write(",\n");
                w.write("    " + m.writeValueAsString(c));
            }
            w.write("\n  ]\n}\n");
        } finally {
            try (var walk = Files.walk(work)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
        System.out.printf("cleaner-diff: %d logs (seed %d, cases %d..%d) run by Kafka 4.4.0's cleaner%n", written, seed,
                first, first + n - 1);
        stats.forEach((k, v) -> System.out.printf("  %-34s %d%n", k, v));
    }

    /** Runs one script on Kafka and returns its case, every clean with Kafka's kept offsets. */
    static ObjectNode run(LogScript script, Path work, Map<String, Long> stats) throws Exception {
        ObjectNode c = NODES.objectNode();
        c.put("kind", "cleaner");
        c.put("name", script.name);
        c.put("profile", script.profile);
        ArrayNode ops = c.putArray("ops");
        try (KafkaLog log = new KafkaLog(work, script.initialConfig, script.startMs)) {
            ops.add(configOp(script.initialConfig));
            for (LogScript.Op op : script.ops) {
                switch (op.kind) {
                    case CONFIG -> {
                        log.updateConfig(op.config);
                        ops.add(configOp(op.config));
                        count(stats, "config changes");
                    }
                    case APPEND -> {
                        log.append(op.timestampMs, op.key, op.value);
                        ArrayNode a = NODES.arrayNode();
                        a.add(op.timestampMs);
                        if (op.key == null) a.addNull(); else a.add(HEX.formatHex(op.key));
                        if (op.value == null) a.addNull(); else a.add(HEX.formatHex(op.value));
                        ops.add(NODES.objectNode().set("append", a));
                        count(stats, "records: " + op.what);
                    }
                    case ROLL -> {
                        log.roll();
                        ops.add(NODES.objectNode().put("roll", true));
                        count(stats, "explicit rolls");
                    }
                    case CLEAN -> {
                        int before = log.rounds;
                        log.clean(op.nowMs);
                        List<Long> kept = log.offsets();
                        ObjectNode o = NODES.objectNode().put("clean", op.nowMs);
                        ArrayNode k = o.putArray("kept");
                        kept.forEach(k::add);
                        ops.add(o);
                        if (TRACE) System.err.println("clean at " + op.nowMs + ": " + log.segments() + " kept " + kept);
                        count(stats, "cleans");
                        count(stats, log.rounds > before ? "cleans: a cleaning round ran" : "cleans: nothing dirty");
                        count(stats, "kept offsets (summed over cleans)", kept.size());
                    }
                }
            }
        }
        count(stats, "profile: " + script.profile);
        return c;
    }

    /**
     * A scratch directory for the logs, on tmpfs when there is one: the log flushes (fsync) at
     * every roll and cleaning, which on a shared disk costs far more than the cleaning itself.
     */
    public static Path workDir(String prefix) throws java.io.IOException {
        Path shm = Paths.get("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm)
                ? Files.createTempDirectory(shm, prefix)
                : Files.createTempDirectory(prefix);
    }

    static ObjectNode configOp(Map<String, Object> config) {
        ObjectNode o = NODES.objectNode();
        ObjectNode cfg = o.putObject("config");
        new TreeMap<>(config).forEach((k, v) -> cfg.put(k, v.toString()));
        return o;
    }

    static void count(Map<String, Long> stats, String what) {
        count(stats, what, 1);
    }

    static void count(Map<String, Long> stats, String what, long n) {
        stats.merge(what, n, Long::sum);
    }

    public static Map<String, Object> config(String policy, long retentionMs, long lagMs, long deleteRetentionMs, long segmentMs) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("cleanup.policy", policy);
        c.put("retention.ms", Long.toString(retentionMs));
        c.put("min.compaction.lag.ms", Long.toString(lagMs));
        c.put("delete.retention.ms", Long.toString(deleteRetentionMs));
        c.put("segment.ms", Long.toString(segmentMs));
        return c;
    }

    static List<Object> list(Object... xs) {
        return new ArrayList<>(List.of(xs));
    }

    static Random random(long seed, int i) {
        return new Random(seed * 0x9E3779B97F4A7C15L + i * 0xC2B2AE3D27D4EB4FL);
    }
}
