package dev.rlmeta.interop.diff;

import dev.rlmeta.interop.diff.KafkaReplayer.Query;
import dev.rlmeta.interop.diff.KafkaReplayer.Seen;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeSet;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;

/**
 * Chooses the queries of a case from what its events mention (so that a shrunk history gets
 * queries that fit it). Initialized partitions get the full set: highestOffsetForEpoch and
 * listSegmentsForEpoch for every epoch seen plus one unseen, listSegments, segmentState for every
 * segment id the partition's events used (plus an unknown id and one of another partition),
 * segmentFor at each epoch's first and last offset within every segment, one past the end, one
 * before the start, one inside, and at -1, 0, past everything and Long.MAX_VALUE. Partitions that
 * are not initialized, deleted, or never loaded (an unused partition number, and the same topic id
 * and number under another topic name) get one query per op, since Kafka answers all of them with
 * the same error before looking at the arguments.
 */
final class QueryPlanner {
    private QueryPlanner() {}

    static final int MAX_SEGMENT_FOR = 80;

    static List<Query> plan(KafkaReplayer r, Random rnd) {
        List<Query> out = new ArrayList<>();
        List<Seen> all = new ArrayList<>(r.seen.values());
        for (Seen s : all) {
            if (r.store.isInitialized(s.tp)) full(s, all, rnd, out);
            else reduced(s.tp, s, rnd, out);
        }
        if (!all.isEmpty()) {
            TopicIdPartition first = all.get(0).tp;
            TopicIdPartition otherNumber = null;
            for (int p = first.partition() + 1; otherNumber == null; p++) {
                TopicIdPartition c = new TopicIdPartition(first.topicId(), p, first.topic());
                if (!r.seen.containsKey(c)) otherNumber = c;
            }
            reduced(otherNumber, all.get(0), rnd, out);
            TopicIdPartition otherName = new TopicIdPartition(first.topicId(), first.partition(), first.topic() + "_x");
            if (!r.seen.containsKey(otherName)) reduced(otherName, all.get(0), rnd, out);
        }
        return out;
    }

    private static void reduced(TopicIdPartition tp, Seen s, Random rnd, List<Query> out) {
        int epoch = s.epochs.isEmpty() ? 0 : s.epochs.iterator().next();
        long offset = s.segments.isEmpty() ? 0 : s.segments.get(0).startOffset();
        Uuid id = s.segmentIds.isEmpty() ? new Uuid(rnd.nextLong(), rnd.nextLong()) : s.segmentIds.iterator().next();
        out.add(new Query("segmentFor", tp, epoch, offset, null));
        out.add(new Query("highestOffsetForEpoch", tp, epoch, null, null));
        out.add(new Query("listSegments", tp, null, null, null));
        out.add(new Query("listSegmentsForEpoch", tp, epoch, null, null));
        out.add(new Query("segmentState", tp, null, null, id));
    }

    private static long epochEnd(RemoteLogSegmentMetadata m, int epoch) {
        NavigableMap<Integer, Long> e = m.segmentLeaderEpochs();
        Map.Entry<Integer, Long> next = e.higherEntry(epoch);
        return next == null ? m.endOffset() : next.getValue() - 1;
    }

    private static void full(Seen s, List<Seen> all, Random rnd, List<Query> out) {
        TreeSet<Integer> epochs = new TreeSet<>(s.epochs);
        int unseen = epochs.isEmpty() ? 0 : (epochs.last() == Integer.MAX_VALUE ? Integer.MIN_VALUE : epochs.last() + 1);
        epochs.add(unseen);
        for (int e : epochs) out.add(new Query("highestOffsetForEpoch", s.tp, e, null, null));
        for (int e : epochs) out.add(new Query("listSegmentsForEpoch", s.tp, e, null, null));
        out.add(new Query("listSegments", s.tp, null, null, null));

        LinkedHashSet<Uuid> ids = new LinkedHashSet<>(s.segmentIds);
        ids.add(new Uuid(rnd.nextLong(), rnd.nextLong()));
        for (Seen o : all) {
            if (o != s && !o.segmentIds.isEmpty()) {
                ids.add(o.segmentIds.iterator().next());
                break;
            }
        }
        for (Uuid id : ids) out.add(new Query("segmentState", s.tp, null, null, id));

        // segmentFor candidates: (epoch, offset) pairs, in a stable order
        LinkedHashSet<List<Long>> cands = new LinkedHashSet<>();
        long maxEnd = 0;
        for (RemoteLogSegmentMetadata m : s.segments) {
            maxEnd = Math.max(maxEnd, m.endOffset());
            for (Map.Entry<Integer, Long> en : m.segmentLeaderEpochs().entrySet()) {
                int e = en.getKey();
                long start = en.getValue();
                long end = epochEnd(m, e);
                cands.add(List.of((long) e, start));
                cands.add(List.of((long) e, end));
                if (end != Long.MAX_VALUE) cands.add(List.of((long) e, end + 1));
                if (start != Long.MIN_VALUE) cands.add(List.of((long) e, start - 1));
                if (end > start && end - start > 1) cands.add(List.of((long) e, start + 1 + Math.floorMod(rnd.nextLong(), end - start - 1)));
            }
        }
        List<Integer> el = new ArrayList<>(epochs);
        for (int i = 0; i < 4; i++) {
            long e = el.get(rnd.nextInt(el.size()));
            long[] offs = {-1, 0, maxEnd == Long.MAX_VALUE ? maxEnd : maxEnd + 1 + rnd.nextInt(50), Long.MAX_VALUE};
            cands.add(List.of(e, offs[i]));
        }
        List<List<Long>> pick = new ArrayList<>(cands);
        if (pick.size() > MAX_SEGMENT_FOR) {
            List<Integer> idx = new ArrayList<>();
            for (int i = 0; i < pick.size(); i++) idx.add(i);
            Collections.shuffle(idx, rnd);
            List<Integer> keep = new ArrayList<>(idx.subList(0, MAX_SEGMENT_FOR));
            Collections.sort(keep);
            List<List<Long>> p2 = new ArrayList<>();
            for (int i : keep) p2.add(pick.get(i));
            pick = p2;
        }
        for (List<Long> c : pick) out.add(new Query("segmentFor", s.tp, (int) (long) c.get(0), c.get(1), null));
    }
}
