package dev.rlmeta.interop.diff;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmeta.interop.diff.KafkaReplayer.Query;
import java.io.IOException;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.log.remote.metadata.storage.DiffStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;

/**
 * Differential test against Kafka 4.4.0's own cache: {@code DiffHarness N SEED OUTFILE} generates N
 * random histories ({@link HistoryGenerator}), replays each into Kafka's
 * RemotePartitionMetadataStore ({@link KafkaReplayer}), asks it the queries of
 * {@link QueryPlanner}, and writes everything as one replay vector file (vectors README §5) that
 * rlmeta's conformance runner then checks. Deterministic: the same N and SEED give the same file
 * (case i depends only on SEED and i, so a case can be regenerated alone with {@code --only i}).
 */
public final class DiffHarness {
    private DiffHarness() {}

    static final HexFormat HEX = HexFormat.of();

    /** One case: its events, its queries (answers possibly still being computed), its counters. */
    static final class Case {
        final String name;
        final List<Ev> events;
        final List<Query> queries;
        final List<Future<?>> pending;
        final Map<String, Long> outcomes;

        Case(String name, List<Ev> events, List<Query> queries, List<Future<?>> pending, Map<String, Long> outcomes) {
            this.name = name;
            this.events = events;
            this.queries = queries;
            this.pending = pending;
            this.outcomes = outcomes;
        }

        void await() throws InterruptedException, ExecutionException {
            for (Future<?> f : pending) f.get();
            pending.clear();
        }
    }

    static long caseSeed(long seed, int index) {
        long z = seed * 0x9E3779B97F4A7C15L + (index + 1) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Replays the events into a fresh Kafka store and asks it the planned queries. Queries on a
     * partition that is not initialized go to {@code pool}: Kafka 4.4.0 waits 100 ms for
     * initialization before throwing ReplicaNotAvailableException, so they are answered in
     * parallel (the store is not changed any more by then).
     */
    static Case buildCase(String name, List<Ev> events, RemoteLogMetadataSerde serde, Random queryRnd, ExecutorService pool) {
        KafkaReplayer r = new KafkaReplayer(serde);
        for (Ev e : events) r.apply(e);
        for (TopicIdPartition tp : r.seen.keySet()) {
            DiffStoreAccess.coverage(r.store, tp).forEach((k, v) -> r.outcomes.merge("reached: " + k, (long) v, Long::sum));
        }
        List<Query> queries = QueryPlanner.plan(r, queryRnd);
        List<Future<?>> pending = new ArrayList<>();
        for (Query q : queries) {
            if (!r.store.isInitialized(q.tp) && pool != null) pending.add(pool.submit(() -> r.answer(q)));
            else r.answer(q);
        }
        return new Case(name, events, queries, pending, r.outcomes);
    }

    static ExecutorService pool(int threads) {
        return Executors.newFixedThreadPool(threads, task -> {
            Thread t = new Thread(task, "kafka-query");
            t.setDaemon(true);
            return t;
        });
    }

    // ------------------------------------------------------------------------------ JSON out

    private static void tip(JsonGenerator g, String field, TopicIdPartition tp) throws IOException {
        g.writeObjectFieldStart(field);
        g.writeStringField("id", tp.topicId().toString());
        g.writeStringField("name", tp.topic());
        g.writeNumberField("partition", tp.partition());
        g.writeEndObject();
    }

    static String caseJson(Case c) throws IOException {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = new JsonFactory().createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField("kind", "replay");
            g.writeStringField("name", c.name);
            g.writeArrayFieldStart("events");
            for (Ev e : c.events) {
                g.writeStartObject();
                if (e.isMark()) {
                    tip(g, "markInitialized", e.mark);
                } else {
                    g.writeStringField("key", e.key);
                    g.writeStringField("value", e.value == null ? null : HEX.formatHex(e.value));
                    g.writeNumberField("offset", e.offset);
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("queries");
            for (Query q : c.queries) {
                g.writeStartObject();
                g.writeStringField("op", q.op);
                tip(g, "topicIdPartition", q.tp);
                if (q.leaderEpoch != null) g.writeNumberField("leaderEpoch", q.leaderEpoch);
                if (q.offset != null) g.writeNumberField("offset", q.offset);
                if (q.segmentId != null) g.writeStringField("segmentId", q.segmentId.toString());
                if (q.error != null) {
                    g.writeStringField("error", q.error);
                } else if (q.expect == null) {
                    g.writeNullField("expect");
                } else if (q.expect instanceof List) {
                    g.writeArrayFieldStart("expect");
                    for (Object o : (List<?>) q.expect) g.writeString((String) o);
                    g.writeEndArray();
                } else if (q.expect instanceof String) {
                    g.writeStringField("expect", (String) q.expect);
                } else {
                    g.writeNumberField("expect", ((Number) q.expect).longValue());
                }
                if (q.ordered != null) g.writeBooleanField("ordered", q.ordered);
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        return w.toString();
    }

    static void writeFile(Path out, String source, List<String> caseJsons) throws IOException {
        Path parent = out.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            w.write("{\"source\": ");
            w.write(new ObjectMapper().writeValueAsString(source));
            w.write(",\n\"cases\": [\n");
            for (int i = 0; i < caseJsons.size(); i++) {
                if (i > 0) w.write(",\n");
                w.write(caseJsons.get(i));
            }
            w.write("\n]}\n");
        }
    }

    static String source(int n, long seed, String only) {
        return "Differential histories written by rlmeta's tests/interop DiffHarness (dev.rlmeta.interop.diff; N=" + n
                + ", SEED=" + seed + (only == null ? "" : ", only case " + only)
                + "; java.util.Random per case, deterministic). Every value was serialized by Apache Kafka 4.4.0's"
                + " RemoteLogMetadataSerde (org.apache.kafka:kafka-storage:4.4.0 from Maven Central, which writes"
                + " version 0), deserialized again and applied to Kafka 4.4.0's RemotePartitionMetadataStore as its"
                + " ConsumerTask does (maybeLoadPartition before a partition's first event or markInitialized;"
                + " a record at or below the last offset applied for its user partition is skipped; an event the"
                + " store throws on is skipped); every expect/error is what that store returned"
                + " (RemoteResourceNotFoundException = notFound, ReplicaNotAvailableException = notInitialized;"
                + " listSegmentsForEpoch is ordered:false only where two segments from the epoch's unreferenced hash"
                + " set share a start offset; listSegments is hash-map order). KIP-1266 keys and tombstones are"
                + " synthetic (apache/kafka#22459 layout); tombstones were not given to Kafka's store.";
    }

    private static void usage() {
        System.err.println("usage: DiffHarness N SEED OUTFILE [--only INDEX] [--threads T]");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        List<String> pos = new ArrayList<>();
        Integer only = null;
        int threads = 200;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--only") && i + 1 < args.length) only = Integer.parseInt(args[++i]);
            else if (args[i].equals("--threads") && i + 1 < args.length) threads = Integer.parseInt(args[++i]);
            else pos.add(args[i]);
        }
        if (pos.size() != 3) usage();
        int n = Integer.parseInt(pos.get(0));
        long seed = Long.parseLong(pos.get(1));
        Path out = Paths.get(pos.get(2));
        long t0 = System.nanoTime();

        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        ExecutorService pool = pool(threads);
        List<Case> cases = new ArrayList<>();
        Map<String, Long> histories = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            if (only != null && i != only) continue;
            long s = caseSeed(seed, i);
            HistoryGenerator gen = new HistoryGenerator(s, serde);
            List<Ev> events = gen.generate();
            String name = String.format("kdiff-%d-%04d-%s-%dp-%dev%s", seed, i, gen.mode().label, gen.partitions(),
                    events.size(), gen.flags().isEmpty() ? "" : "-" + String.join("-", gen.flags()));
            histories.merge("key mode " + gen.mode().label, 1L, Long::sum);
            histories.merge(gen.partitions() + " user partition(s)", 1L, Long::sum);
            for (String f : gen.flags()) histories.merge("with " + f, 1L, Long::sum);
            cases.add(buildCase(name, events, serde, new Random(s ^ 0x2545F4914F6CDD1DL), pool));
        }
        Map<String, Long> outcomes = new TreeMap<>();
        Map<String, Long> answers = new TreeMap<>();
        List<String> jsons = new ArrayList<>();
        long events = 0;
        long queries = 0;
        for (Case c : cases) {
            c.await();
            c.outcomes.forEach((k, v) -> outcomes.merge(k, v, Long::sum));
            events += c.events.size();
            queries += c.queries.size();
            for (Query q : c.queries) {
                String kind = q.error != null ? "error " + q.error
                        : q.expect == null ? "null"
                        : q.expect instanceof List ? (((List<?>) q.expect).isEmpty() ? "[]" : "non-empty list")
                        : "value";
                if (Boolean.FALSE.equals(q.ordered) && q.op.equals("listSegmentsForEpoch")) kind += " (ordered:false)";
                answers.merge(String.format("%-22s %s", q.op, kind), 1L, Long::sum);
            }
            jsons.add(caseJson(c));
        }
        pool.shutdownNow();
        writeFile(out, source(n, seed, only == null ? null : String.valueOf(only)), jsons);

        System.out.printf("wrote %s: %d cases, %d events, %d queries (%.1f s)%n", out, cases.size(), events, queries,
                (System.nanoTime() - t0) / 1e9);
        System.out.println("histories:");
        histories.forEach((k, v) -> System.out.printf("  %6d  %s%n", v, k));
        System.out.println("events (as Kafka's store saw them; \"reached\": cache states found after replay):");
        outcomes.forEach((k, v) -> System.out.printf("  %6d  %s%n", v, k));
        System.out.println("queries (Kafka's answers):");
        answers.forEach((k, v) -> System.out.printf("  %6d  %s%n", v, k));
    }
}
