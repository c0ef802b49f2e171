package dev.rlmeta.interop.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmeta.interop.cleaner.CleanerDiff;
import dev.rlmeta.interop.cleaner.KafkaLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.DiffStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;

/**
 * The planner property against Kafka 4.4.0's own classes: {@code PlanProperty FILE [--only NAME]}
 * reads logs written by rlmeta's planner ({@code rlmeta-conformance --plan-logs N SEED}) and,
 * for every log,
 * <ol>
 *   <li>replays the whole log in Kafka's {@code RemotePartitionMetadataStore} ({@link KafkaReplayer},
 *       values at version 0) and checks it holds exactly the segments, in the states, that the
 *       script meant (or, after a partition deletion, no partition);
 *   <li>at levels 1 and 2, appends the log record by record to a real log directory
 *       ({@link KafkaLog}: UnifiedLog + Kafka's Cleaner, compact policy, a small
 *       delete.retention.ms), rolls and cleans after every record, and at every cut replays
 *       what Kafka's cleaner kept next to the whole prefix: the answers (segments and states,
 *       listRemoteLogSegments per leader epoch in Kafka's order, highestOffsetForEpoch, errors)
 *       must be the same, except, as the compaction-safety rule allows, for segments whose
 *       remote data was already deleted (their DELETE_SEGMENT_FINISHED planned): those may be
 *       forgotten early, and a finished segment they displaced may be listed again; the highest
 *       offset of an epoch may be lower (also once a deletion has started: DELETE_SEGMENT_STARTED
 *       replaces COPY_SEGMENT_FINISHED on the update key, and Kafka's epoch state learns a
 *       segment's end only from FINISHED), never higher, never below the epoch's end in a live finished segment.
 * </ol>
 * Level 0 logs are never compacted (cleanup.policy=delete): only (1) applies. A log with a history
 * written before KIP-1266 (null keys: a deposed leader's late backfill) becomes compacted at its
 * {@code compactFrom}, once its backfill is in: (2) applies from there, but for its {@code unsettled}
 * cuts (a deposed leader's late records, until the new leader's next backfill check). Prints the counts;
 * exits 1 on any failure, naming the log (its seed and index) and the cut.
 */
public final class PlanProperty {
    private PlanProperty() {}

    private static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();
    private static final HexFormat HEX = HexFormat.of();

    /** What Kafka's store answers about one partition. */
    static final class Answers {
        String error;
        final TreeMap<String, Integer> states = new TreeMap<>();
        final Map<String, RemoteLogSegmentMetadata> segments = new HashMap<>();

        /** The last offset of leader epoch {@code e} in segment {@code id}. */
        long epochEnd(String id, int e) {
            RemoteLogSegmentMetadata m = segments.get(id);
            Map.Entry<Integer, Long> next = m.segmentLeaderEpochs().higherEntry(e);
            return next == null ? m.endOffset() : next.getValue() - 1;
        }
        final TreeMap<Integer, List<String>> byEpoch = new TreeMap<>();
        final Map<Integer, Boolean> ordered = new HashMap<>();
        final TreeMap<Integer, Long> highest = new TreeMap<>();

        @Override
        public String toString() {
            return error != null ? "error " + error : "segments " + states + ", by epoch " + byEpoch + ", highest " + highest;
        }
    }

    static Answers answers(List<Object[]> records, TopicIdPartition tp, Set<Integer> epochs) throws Exception {
        KafkaReplayer r = new KafkaReplayer(SERDE);
        for (Object[] rec : records) {
            byte[] key = (byte[]) rec[1];
            r.apply(Ev.record(key == null ? null : new String(key, StandardCharsets.UTF_8), (byte[]) rec[2], (Long) rec[0]));
        }
        Answers a = new Answers();
        try {
            r.apply(Ev.markInitialized(tp));
        } catch (RuntimeException e) {
            // after DELETE_PARTITION_FINISHED the store holds no cache for the partition to mark
            a.error = "markInitialized: " + e.getClass().getSimpleName();
            return a;
        }
        try {
            Iterator<RemoteLogSegmentMetadata> it = DiffStoreAccess.listRemoteLogSegments(r.store, tp);
            while (it.hasNext()) {
                RemoteLogSegmentMetadata m = it.next();
                a.states.put(m.remoteLogSegmentId().id().toString(), (int) m.state().id());
                a.segments.put(m.remoteLogSegmentId().id().toString(), m);
            }
            for (int e : epochs) {
                List<RemoteLogSegmentMetadata> list = new ArrayList<>();
                Iterator<RemoteLogSegmentMetadata> li = DiffStoreAccess.listRemoteLogSegments(r.store, tp, e);
                while (li.hasNext()) list.add(li.next());
                List<String> ids = new ArrayList<>();
                for (RemoteLogSegmentMetadata m : list) ids.add(m.remoteLogSegmentId().id().toString());
                a.byEpoch.put(e, ids);
                a.ordered.put(e, !KafkaReplayer.hashOrderMatters(list, DiffStoreAccess.unreferencedSegmentIds(r.store, tp, e)));
                a.highest.put(e, DiffStoreAccess.highestLogOffset(r.store, tp, e).orElse(null));
            }
        } catch (Exception e) {
            a.error = e.getClass().getSimpleName();
        }
        return a;
    }

    /** Null when the compacted log answers as the whole prefix does (within the allowed differences). */
    static String compare(Answers full, Answers compacted, Set<String> dataDeleted) {
        if (!Objects.equals(full.error, compacted.error)) return "error: whole " + full.error + ", compacted " + compacted.error;
        if (full.error != null) return null;
        for (var e : compacted.states.entrySet()) {
            if (!Objects.equals(full.states.get(e.getKey()), e.getValue())) {
                return "compacted shows " + e.getKey() + " in state " + e.getValue() + ", the whole log " + full.states.get(e.getKey());
            }
        }
        for (String id : full.states.keySet()) {
            if (!compacted.states.containsKey(id) && !dataDeleted.contains(id)) {
                return "compacted forgot " + id + " (state " + full.states.get(id) + ") whose data is not deleted";
            }
        }
        for (int e : full.byEpoch.keySet()) {
            List<String> f = new ArrayList<>(full.byEpoch.get(e)), c = new ArrayList<>(compacted.byEpoch.get(e));
            Set<String> extra = new HashSet<>(c);
            extra.removeAll(f);
            for (String id : extra) {
                // a finished segment a data-deleted one had displaced may serve its epoch again
                if (dataDeleted.isEmpty() || !Objects.equals(compacted.states.get(id), (int) RemoteLogSegmentState.COPY_SEGMENT_FINISHED.id())) {
                    return "epoch " + e + ": compacted lists " + id + ", the whole log does not";
                }
            }
            f.removeAll(dataDeleted);
            c.removeAll(dataDeleted);
            c.removeAll(extra);
            boolean ordered = full.ordered.get(e) && compacted.ordered.get(e);
            if (ordered ? !f.equals(c) : !new TreeSet<>(f).equals(new TreeSet<>(c))) {
                return "epoch " + e + ": whole log lists " + full.byEpoch.get(e) + ", compacted " + compacted.byEpoch.get(e)
                        + (ordered ? "" : " (as sets)");
            }
            Long hf = full.highest.get(e), hc = compacted.highest.get(e);
            if (!Objects.equals(hf, hc)) {
                long liveEnd = Long.MIN_VALUE;
                for (String id : compacted.byEpoch.get(e)) {
                    if (Objects.equals(compacted.states.get(id), (int) RemoteLogSegmentState.COPY_SEGMENT_FINISHED.id())) {
                        liveEnd = Math.max(liveEnd, compacted.epochEnd(id, e));
                    }
                }
                boolean lower = hc == null ? liveEnd == Long.MIN_VALUE : hf != null && hc < hf && hc >= liveEnd;
                if (!lower) {
                    return "epoch " + e + ": highest offset whole " + hf + ", compacted " + hc;
                }
            }
        }
        return null;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: PlanProperty FILE [--only NAME]");
            System.exit(2);
        }
        String only = args.length >= 3 && args[1].equals("--only") ? args[2] : null;
        JsonNode doc = new ObjectMapper().readTree(Paths.get(args[0]).toFile());
        Path work = CleanerDiff.workDir("rlmeta-plan-property-");
        long logs = 0, cuts = 0, records = 0, failed = 0, rounds = 0, forgotten = 0;
        Map<Integer, Long> byLevel = new TreeMap<>();
        try {
            for (JsonNode c : doc.get("cases")) {
                String name = c.get("name").asText();
                if (only != null && !only.equals(name)) continue;
                int level = c.get("featureLevel").asInt();
                JsonNode p = c.get("partition");
                TopicIdPartition tp = new TopicIdPartition(Uuid.fromString(p.get("topicId").asText()),
                        p.get("partition").asInt(), p.get("topic").asText());
                List<Object[]> log = new ArrayList<>();
                Set<Integer> epochs = new TreeSet<>();
                for (JsonNode r : c.get("records")) {
                    byte[] key = r.get(0).isNull() ? null : r.get(0).asText().getBytes(StandardCharsets.UTF_8);
                    byte[] value = r.get(2).isNull() ? null : HEX.parseHex(r.get(2).asText());
                    if (value != null && SERDE.deserialize(value) instanceof RemoteLogSegmentMetadata m) {
                        epochs.addAll(m.segmentLeaderEpochs().keySet());
                    }
                    log.add(new Object[] {(long) log.size(), key, value});
                }
                Map<String, Integer> deletedAt = new HashMap<>();
                for (JsonNode d : c.get("dataDeleted")) deletedAt.put(d.get(0).asText(), d.get(1).asInt());
                logs++;
                records += log.size();
                byLevel.merge(level, 1L, Long::sum);
                String why = null;
                // (1) the whole log, as the script meant it
                Answers whole = answers(log, tp, epochs);
                if (c.get("partitionDeleted").asBoolean()) {
                    if (whole.error == null) why = "the partition was deleted, Kafka's store still serves it: " + whole;
                } else {
                    TreeMap<String, Integer> live = new TreeMap<>();
                    for (JsonNode l : c.get("live")) live.put(l.get(0).asText(), l.get(1).asInt());
                    if (whole.error != null || !whole.states.equals(live)) {
                        why = "the whole log holds " + whole + ", the script meant " + live;
                    }
                }
                // (2) every cut, compacted by Kafka's cleaner
                if (why == null && level > 0) {
                    long deleteRetention = new long[] {0, 2, 5, 20}[(int) (logs % 4)];
                    // A history with null keys is compacted only from compactFrom on (once its backfill is in).
                    int compactFrom = c.has("compactFrom") ? c.get("compactFrom").asInt() : 0;
                    // a deposed leader's late records, until its successor's next check: cleaned, not compared
                    JsonNode unsettled = c.get("unsettled");
                    var compact = CleanerDiff.config("compact", -1, 0, deleteRetention, 604_800_000L);
                    try (KafkaLog kafka = new KafkaLog(work, compactFrom > 0 ? CleanerDiff.config("delete", -1, 0, deleteRetention, 604_800_000L) : compact, 0)) {
                        for (int cut = 0; cut < log.size() && why == null; cut++) {
                            Object[] r = log.get(cut);
                            kafka.append(1_000 + cut, (byte[]) r[1], (byte[]) r[2]);
                            if (cut + 1 < compactFrom) continue;
                            if (cut + 1 == compactFrom) kafka.updateConfig(compact);
                            kafka.roll();
                            kafka.clean(1_001 + cut);
                            if (unsettled != null && cut >= unsettled.get(0).asInt() && cut < unsettled.get(1).asInt()) continue;
                            List<Object[]> kept = kafka.records();
                            Set<String> dataDeleted = new HashSet<>();
                            for (var d : deletedAt.entrySet()) if (d.getValue() <= cut) dataDeleted.add(d.getKey());
                            Answers f = answers(log.subList(0, cut + 1), tp, epochs);
                            Answers k = answers(kept, tp, epochs);
                            cuts++;
                            if (f.error == null && k.error == null && f.states.size() > k.states.size()) forgotten++;
                            String diff = compare(f, k, dataDeleted);
                            if (diff != null) {
                                why = "cut after record " + cut + " (" + kept.size() + " of " + (cut + 1) + " records kept): " + diff;
                            }
                        }
                        rounds += kafka.rounds();
                    }
                }
                if (why != null) {
                    failed++;
                    System.out.println("FAIL " + name + " (level " + level + ", " + log.size() + " records; regenerate with"
                            + " rlmeta-conformance --plan-logs, run alone with --only " + name + "): " + why);
                    if (failed <= 3) {
                        for (int i = 0; i < log.size(); i++) {
                            JsonNode r = c.get("records").get(i);
                            Object[] rec = log.get(i);
                            System.out.println("    " + i + " (event " + r.get(3).asInt() + ") " + r.get(0).asText() + " -> "
                                    + (rec[2] == null ? "null" : SERDE.deserialize((byte[]) rec[2])));
                        }
                    }
                }
            }
        } finally {
            try (var walk = Files.walk(work)) {
                for (Path q : walk.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(q);
            }
        }
        System.out.printf("plan-property: %d planned logs (%s by level), %d records, %d cuts compacted by Kafka's cleaner"
                + " (%d cleaning rounds, %d cuts where a data-deleted segment was forgotten early): %d passed, %d failed%n",
                logs, byLevel, records, cuts, rounds, forgotten, logs - failed, failed);
        System.exit(failed > 0 || logs == 0 ? 1 : 0);
    }
}
