package dev.rlmeta.interop.diff;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmeta.interop.diff.KafkaReplayer.Query;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;

/**
 * Shrinks the cases of a DiffHarness file on which rlmeta's conformance runner fails to minimal
 * histories: {@code Shrink FILE CONFORMANCE_BINARY OUTFILE [CASE_NAME...]} (default: every case
 * the runner reports as failing). Events are removed (chunks, then one by one, until nothing can
 * go) as long as the runner still fails a query of the same op on the case rebuilt from the
 * remaining events; the queries and Kafka's answers are recomputed by Kafka 4.4.0 at every step
 * (so the shrunk case is again a genuine Kafka vector). OUTFILE gets the shrunk cases with only
 * their failing queries; stdout shows each one with its events decoded by Kafka and the runner's
 * complaint (rlmeta's answer next to Kafka's).
 */
public final class Shrink {
    private static final Pattern FAIL = Pattern.compile("^FAIL (.*): (\\S+) \\(replay\\): (.*)$");
    private static final Pattern QUERY = Pattern.compile("query #(\\d+) ");

    private final String binary;
    private final RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
    private final ExecutorService pool = DiffHarness.pool(64);
    private final ObjectMapper json = new ObjectMapper();
    private int runs;

    private Shrink(String binary) {
        this.binary = binary;
    }

    /** Runs the conformance binary on one file; returns its combined output. */
    private String run(Path file) throws IOException, InterruptedException {
        runs++;
        Process p = new ProcessBuilder(binary, file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    private DiffHarness.Case build(String name, List<Ev> events) throws Exception {
        DiffHarness.Case c = DiffHarness.buildCase(name, events, serde, new Random(1), pool);
        c.await();
        return c;
    }

    /** The ops of the failing queries of one case (empty if it passes), from the runner's output. */
    private List<String[]> failures(DiffHarness.Case c) throws Exception {
        Path tmp = Files.createTempFile("kdiff-shrink", ".json");
        try {
            DiffHarness.writeFile(tmp, "shrink step", List.of(DiffHarness.caseJson(c)));
            return parseFailures(run(tmp));
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** [query index, op, query json, complaint] for every failing query the runner printed. */
    private List<String[]> parseFailures(String out) throws IOException {
        List<String[]> list = new ArrayList<>();
        for (String line : out.split("\n")) {
            Matcher m = QUERY.matcher(line);
            if (!m.find()) continue;
            String rest = line.substring(m.end());
            try (JsonParser p = json.getFactory().createParser(rest)) {
                JsonNode q = p.readValueAsTree();
                int end = (int) p.currentLocation().getCharOffset();
                String complaint = rest.substring(Math.min(rest.length(), end)).replaceFirst("^: ", "");
                list.add(new String[] {m.group(1), q.path("op").asText(), rest.substring(0, end), complaint});
            }
        }
        return list;
    }

    private boolean stillFails(String name, List<Ev> events, String op) throws Exception {
        for (String[] f : failures(build(name, events))) if (f[1].equals(op)) return true;
        return false;
    }

    private List<Ev> minimize(String name, List<Ev> events, String op) throws Exception {
        List<Ev> cur = new ArrayList<>(events);
        int chunk = Math.max(1, cur.size() / 2);
        while (true) {
            boolean removed = false;
            for (int from = 0; from < cur.size(); ) {
                List<Ev> cand = new ArrayList<>(cur.subList(0, from));
                cand.addAll(cur.subList(Math.min(cur.size(), from + chunk), cur.size()));
                if (cand.size() < cur.size() && stillFails(name, cand, op)) {
                    cur = cand;
                    removed = true;
                } else {
                    from += chunk;
                }
            }
            if (chunk == 1 && !removed) return cur;
            if (!removed) chunk = Math.max(1, chunk / 2);
        }
    }

    private static List<Ev> events(JsonNode c) {
        List<Ev> out = new ArrayList<>();
        for (JsonNode e : c.path("events")) {
            JsonNode m = e.get("markInitialized");
            if (m != null) {
                out.add(Ev.markInitialized(new TopicIdPartition(Uuid.fromString(m.get("id").asText()),
                        m.get("partition").asInt(), m.get("name").asText())));
            } else {
                String key = e.path("key").isNull() ? null : e.path("key").asText();
                byte[] value = e.path("value").isNull() ? null : DiffHarness.HEX.parseHex(e.path("value").asText());
                out.add(Ev.record(key, value, e.path("offset").asLong()));
            }
        }
        return out;
    }

    private String describe(Ev e) {
        if (e.isMark()) return "markInitialized " + e.mark;
        String k = e.key == null ? "key=null" : "key=" + e.key;
        if (e.value == null) return "offset " + e.offset + " " + k + " TOMBSTONE";
        return "offset " + e.offset + " " + k + " " + serde.deserialize(e.value);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: Shrink FILE CONFORMANCE_BINARY OUTFILE [CASE_NAME...]");
            System.exit(2);
        }
        Path file = Paths.get(args[0]);
        Shrink s = new Shrink(args[1]);
        Set<String> names = new LinkedHashSet<>();
        for (int i = 3; i < args.length; i++) names.add(args[i]);
        if (names.isEmpty()) {
            for (String line : s.run(file).split("\n")) {
                Matcher m = FAIL.matcher(line);
                if (m.find()) names.add(m.group(2));
            }
        }
        JsonNode root = s.json.readTree(file.toFile());
        List<String> out = new ArrayList<>();
        for (JsonNode c : root.path("cases")) {
            String name = c.path("name").asText();
            if (!names.contains(name)) continue;
            List<Ev> events = events(c);
            List<String[]> first = s.failures(s.build(name, events));
            if (first.isEmpty()) {
                System.out.println("== " + name + ": passes when rebuilt from its events; not shrunk");
                continue;
            }
            String op = first.get(0)[1];
            int before = s.runs;
            List<Ev> min = s.minimize(name, events, op);
            DiffHarness.Case mc = s.build(name + "-min", min);
            List<String[]> fails = s.failures(mc);
            List<Query> keep = new ArrayList<>();
            for (String[] f : fails) keep.add(mc.queries.get(Integer.parseInt(f[0])));
            out.add(DiffHarness.caseJson(new DiffHarness.Case(mc.name, min, keep, new ArrayList<>(), mc.outcomes)));
            System.out.printf("== %s: %d -> %d events (%d runner calls), failing %s%n", name, events.size(), min.size(),
                    s.runs - before, op);
            for (Ev e : min) System.out.println("   " + s.describe(e));
            for (String[] f : fails) System.out.println("   query " + f[2] + "\n     runner: " + f[3]);
        }
        s.pool.shutdownNow();
        DiffHarness.writeFile(Paths.get(args[2]), "Minimized by dev.rlmeta.interop.diff.Shrink from " + file
                + " (" + root.path("source").asText() + ")", out);
        System.out.println(out.size() + " case(s) written to " + args[2]);
    }
}
