package dev.rlmeta.cluster;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.clients.consumer.ConsumerRecord;

import dev.rlmeta.RlMeta;
import dev.rlmeta.RlMetaException;

/** The records of __remote_log_metadata as a test sees them: key text, and the value decoded by rlmeta. */
public final class MetaTopic {
    public static final String NAME = "__remote_log_metadata";
    public static final String LEVEL_KEY = "remote.log.metadata.version";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One record: `key` null for a null key, `value` null for a tombstone, `decoded` null if undecodable. */
    public record Rec(int partition, long offset, String key, byte[] value, JsonNode decoded) {
        public boolean tombstone() { return value == null; }
        public boolean levelRecord() { return LEVEL_KEY.equals(key); }
        public int apiKey() { return decoded == null ? -1 : decoded.get("apiKey").asInt(); }
        public JsonNode record() { return decoded == null ? null : decoded.get("record"); }
        /** The record's user topic id (from its key, or its value when it has no key). */
        public boolean isFor(String topicId) {
            if (key != null && key.startsWith(topicId + ":")) {
                return true;
            }
            return decoded != null && decoded.toString().contains("\"" + topicId + "\"");
        }
        /** The segment state a segment record (0) or update (1) carries, else -1. */
        public int state() {
            JsonNode r = record();
            return r == null || r.get("remoteLogSegmentState") == null ? -1 : r.get("remoteLogSegmentState").asInt();
        }
        /** The broker leader epoch field of the key (the 5th field), or Integer.MIN_VALUE. */
        public int keyEpoch() {
            if (key == null) {
                return Integer.MIN_VALUE;
            }
            String[] f = key.split(":");
            return f.length >= 5 ? Integer.parseInt(f[4]) : Integer.MIN_VALUE;
        }
    }

    public static List<Rec> read(String bootstrap) {
        return read(java.util.Map.of("bootstrap.servers", bootstrap));
    }

    /** As above with the client settings given (bootstrap and security). */
    public static List<Rec> read(java.util.Map<String, Object> client) {
        List<Rec> out = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : Tiered.readAll(client, NAME, Duration.ofSeconds(60))) {
            String key = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
            JsonNode decoded = null;
            if (r.value() != null && !LEVEL_KEY.equals(key)) {
                try {
                    decoded = JSON.readTree(RlMeta.decodeValueJson(r.value()));
                } catch (RlMetaException | java.io.IOException e) {
                    decoded = null;
                }
            }
            out.add(new Rec(r.partition(), r.offset(), key, r.value(), decoded));
        }
        return out;
    }

    public static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + e.getMessage());
        }
    }

    private MetaTopic() {}
}
