package dev.rlmeta.interop.diff;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.server.log.remote.metadata.storage.DiffStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;

/**
 * {@code FileReplay OUT.json FILE...}: each {@code __remote_log_metadata} segment file read with
 * Kafka 4.4.0's own classes only (FileRecords for the batches and records, its codecs,
 * RemoteLogMetadataSerde) and replayed into a fresh RemotePartitionMetadataStore as Kafka's
 * ConsumerTask would (KafkaReplayer), every user partition then marked initialized; writes, per
 * file, the segments Kafka's store then lists (id and state, per user partition) and what it met
 * on the way. A second path to the inspector's "live segments" that shares no rlmeta code
 * (bindings-wasm/inspector/tests/kafka.test.mjs). The replay ends at the first batch whose CRC is
 * wrong, as a consumer checking CRCs (Kafka's default) and a broker recovering its log stop there;
 * values Kafka's serde cannot read (a 4.4.0 consumer would stop) are counted, not replayed.
 */
public final class FileReplay {
    private FileReplay() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) throw new IllegalArgumentException("usage: FileReplay OUT.json FILE...");
        ObjectMapper json = new ObjectMapper();
        ObjectNode out = json.createObjectNode();
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        for (int i = 1; i < args.length; i++) {
            out.set(args[i], replay(json, serde, new File(args[i])));
        }
        json.writerWithDefaultPrettyPrinter().writeValue(new File(args[0]), out);
        System.out.println("FileReplay: " + (args.length - 1) + " files replayed into Kafka 4.4.0's store");
    }

    private static ObjectNode replay(ObjectMapper json, RemoteLogMetadataSerde serde, File file) throws Exception {
        KafkaReplayer r = new KafkaReplayer(serde);
        long batches = 0;
        long stoppedAt = -1;
        long records = 0;
        long unreadable = 0;
        try (FileRecords fr = FileRecords.open(file, false)) {
            for (FileChannelRecordBatch b : fr.batches()) {
                if (!b.isValid()) {
                    stoppedAt = b.position();
                    break;
                }
                batches++;
                if (b.isControlBatch()) continue;
                for (Record rec : b) {
                    records++;
                    String key = rec.hasKey() ? StandardCharsets.UTF_8.decode(rec.key()).toString() : null;
                    byte[] value = rec.hasValue() ? bytes(rec.value()) : null;
                    try {
                        r.apply(Ev.record(key, value, rec.offset()));
                    } catch (RuntimeException e) {
                        unreadable++;
                    }
                }
            }
        }
        List<TopicIdPartition> seen = new ArrayList<>(r.seen.keySet());
        for (TopicIdPartition tp : seen) r.apply(Ev.markInitialized(tp));
        ObjectNode f = json.createObjectNode();
        f.put("batches", batches).put("stoppedAtBadCrcPosition", stoppedAt).put("records", records)
                .put("unreadableByKafka", unreadable);
        ArrayNode parts = f.putArray("partitions");
        long live = 0;
        for (TopicIdPartition tp : seen) {
            ObjectNode p = parts.addObject();
            p.put("topicId", tp.topicId().toString()).put("topic", tp.topic()).put("partition", tp.partition());
            ArrayNode segs = p.putArray("segments");
            try {
                Iterator<RemoteLogSegmentMetadata> it = DiffStoreAccess.listRemoteLogSegments(r.store, tp);
                while (it.hasNext()) {
                    RemoteLogSegmentMetadata m = it.next();
                    segs.addObject().put("id", m.remoteLogSegmentId().id().toString()).put("state", m.state().name());
                    live++;
                }
            } catch (RemoteResourceNotFoundException e) {
                p.put("deleted", true);
            }
        }
        f.put("liveSegments", live);
        ObjectNode outcomes = f.putObject("outcomes");
        for (Map.Entry<String, Long> e : r.outcomes.entrySet()) outcomes.put(e.getKey(), e.getValue());
        return f;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
