package dev.rlmeta.interop.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmeta.interop.diff.KafkaReplayer.Query;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;

/**
 * {@code ReplayCheck FILE...}: replays every replay case (vectors README §5) of the given files
 * into Kafka 4.4.0's RemotePartitionMetadataStore exactly as DiffHarness does, asks Kafka the
 * case's own queries and compares with their expect/error (sets where {@code ordered} is false).
 * Checks that a file written by Kafka's classes of another version (the shared replay-*.json, from
 * apache/kafka@1eb7644) says what 4.4.0 says, and that DiffHarness output is reproducible. Prints
 * one line per differing query and {@code N passed, M failed}; exit 1 if M > 0.
 */
public final class ReplayCheck {
    private ReplayCheck() {}

    private static TopicIdPartition tip(JsonNode j) {
        return new TopicIdPartition(Uuid.fromString(j.get("id").asText()), j.get("partition").asInt(), j.get("name").asText());
    }

    private static JsonNode answer(ObjectMapper json, Query q, boolean asSet) {
        if (q.error != null) return json.createObjectNode().put("error", q.error);
        JsonNode v = json.valueToTree(q.expect);
        if (asSet && v.isArray()) {
            List<String> ids = new ArrayList<>();
            v.forEach(x -> ids.add(x.asText()));
            ids.sort(null);
            v = json.valueToTree(ids);
        }
        return v;
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        ExecutorService pool = DiffHarness.pool(200);
        int passed = 0;
        int failed = 0;
        long queries = 0;
        for (String file : args) {
            for (JsonNode c : json.readTree(new File(file)).path("cases")) {
                if (!"replay".equals(c.path("kind").asText())) continue;
                List<Ev> events = new ArrayList<>();
                for (JsonNode e : c.path("events")) {
                    JsonNode m = e.get("markInitialized");
                    if (m != null) events.add(Ev.markInitialized(tip(m)));
                    else events.add(Ev.record(e.path("key").isNull() ? null : e.path("key").asText(),
                            e.path("value").isNull() ? null : DiffHarness.HEX.parseHex(e.path("value").asText()),
                            e.path("offset").asLong()));
                }
                KafkaReplayer r = new KafkaReplayer(serde);
                for (Ev e : events) r.apply(e);
                List<Query> qs = new ArrayList<>();
                List<Future<?>> pending = new ArrayList<>();
                for (JsonNode qj : c.path("queries")) {
                    Query q = new Query(qj.path("op").asText(), tip(qj.get("topicIdPartition")),
                            qj.has("leaderEpoch") ? qj.get("leaderEpoch").asInt() : null,
                            qj.has("offset") ? qj.get("offset").asLong() : null,
                            qj.has("segmentId") ? Uuid.fromString(qj.get("segmentId").asText()) : null);
                    qs.add(q);
                    if (r.store.isInitialized(q.tp)) r.answer(q);
                    else pending.add(pool.submit(() -> r.answer(q)));
                }
                for (Future<?> f : pending) f.get();
                boolean ok = true;
                int i = 0;
                for (JsonNode qj : c.path("queries")) {
                    Query q = qs.get(i);
                    boolean asSet = qj.has("ordered") && !qj.get("ordered").asBoolean();
                    JsonNode want = qj.has("error") ? json.createObjectNode().put("error", qj.get("error").asText())
                            : qj.path("expect");
                    if (asSet && want.isArray()) {
                        List<String> ids = new ArrayList<>();
                        want.forEach(x -> ids.add(x.asText()));
                        ids.sort(null);
                        want = json.valueToTree(ids);
                    }
                    JsonNode got = answer(json, q, asSet);
                    boolean same = want.isNumber() && got.isNumber() ? want.asLong() == got.asLong() : want.equals(got);
                    if (!same) {
                        ok = false;
                        System.out.printf("DIFF %s: %s query #%d %s: file says %s, Kafka 4.4.0 says %s%n", file,
                                c.path("name").asText(), i, qj, want, got);
                    }
                    i++;
                }
                queries += i;
                if (ok) passed++;
                else failed++;
            }
        }
        pool.shutdownNow();
        System.out.printf("%d queries checked; %d passed, %d failed%n", queries, passed, failed);
        System.exit(failed > 0 ? 1 : 0);
    }
}
