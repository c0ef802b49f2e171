package dev.rlmeta.interop.cleaner;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;

/**
 * One random log script for the cleaner differential: appends (one record per batch), explicit
 * rolls (standing in for segment.bytes), topic config changes (a level move) and cleans at chosen
 * moments. Keys: KIP-1266 segment and update keys, the level-record key, garbage, empty, and null
 * (only while the policy is {@code delete}: Kafka refuses keyless records on a compacted topic, so
 * null keys reach a compacted log as level 0's leftovers). Values: Kafka 4.4.0's own serialization
 * of segment, update and partition-delete metadata, level values, undecodable bytes, empty values
 * and tombstones. Timestamps mostly grow, sometimes repeat, go back, or jump ahead. The last
 * cleans are placed around the tombstones' delete horizon and the retention limit.
 */
final class LogScript {
    enum Kind { CONFIG, APPEND, ROLL, CLEAN }

    static final class Op {
        Kind kind;
        Map<String, Object> config;
        long timestampMs;
        byte[] key, value;
        String what;
        long nowMs;
    }

    private static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();
    static final byte[] LEVEL_KEY = "remote.log.metadata.version".getBytes(StandardCharsets.UTF_8);

    final String name;
    final String profile;
    final long startMs = 1_000_000_000L;
    Map<String, Object> initialConfig;
    final List<Op> ops = new ArrayList<>();

    private final Random rnd;
    private long t = startMs;
    private long lastClean = startMs;
    private Map<String, Object> current;
    private final List<byte[]> keys = new ArrayList<>();
    private final TopicIdPartition tp;

    private LogScript(String name, String profile, Random rnd) {
        this.name = name;
        this.profile = profile;
        this.rnd = rnd;
        this.tp = new TopicIdPartition(new Uuid(rnd.nextLong(), rnd.nextLong()), rnd.nextInt(8), "t" + rnd.nextInt(100));
    }

    static LogScript generate(long seed, int i) {
        Random rnd = CleanerDiff.random(seed, i);
        String[] profiles = {"level-1", "level-2", "level-0-1-2", "level-1-2", "random"};
        LogScript s = new LogScript("cleaner-" + seed + "-" + i, profiles[rnd.nextInt(profiles.length)], rnd);
        s.build();
        return s;
    }

    private int between(int lo, int hi) {
        return lo + rnd.nextInt(hi - lo + 1);
    }

    private boolean chance(double p) {
        return rnd.nextDouble() < p;
    }

    private long deleteRetention() {
        return switch (rnd.nextInt(4)) {
            case 0 -> 0;
            case 1 -> between(1, 5);
            default -> between(10, 200);
        };
    }

    private long segmentMs() {
        return chance(0.5) ? 604_800_000L : between(5, 300);
    }

    private Map<String, Object> level1(long dr, long seg) {
        long r = between(20, 400);
        return CleanerDiff.config("compact,delete", r, r, dr, seg);
    }

    private Map<String, Object> level2(long dr, long seg) {
        return CleanerDiff.config("compact", -1, 0, dr, seg);
    }

    private Map<String, Object> randomConfig(long dr, long seg) {
        String[] policies = {"delete", "compact", "compact,delete", "delete,compact"};
        long retention = chance(0.3) ? -1 : between(5, 500);
        long lag = chance(0.4) ? 0 : between(1, 200);
        return CleanerDiff.config(policies[rnd.nextInt(policies.length)], retention, lag, dr, seg);
    }

    private void build() {
        long dr = deleteRetention(), seg = segmentMs();
        List<Map<String, Object>> phases = new ArrayList<>();
        switch (profile) {
            case "level-1" -> phases.add(level1(dr, seg));
            case "level-2" -> phases.add(level2(dr, seg));
            case "level-0-1-2" -> {
                phases.add(CleanerDiff.config("delete", chance(0.5) ? -1 : between(50, 500), 0, dr, seg));
                phases.add(level1(dr, seg));
                if (chance(0.6)) phases.add(level2(dr, seg));
            }
            case "level-1-2" -> {
                phases.add(level1(dr, seg));
                phases.add(level2(dr, seg));
            }
            default -> {
                phases.add(randomConfig(dr, seg));
                if (chance(0.3)) phases.add(randomConfig(deleteRetention(), segmentMs()));
            }
        }
        int nKeys = between(2, 25);
        for (int k = 0; k < nKeys; k++) keys.add(newKey());
        initialConfig = phases.get(0);
        current = initialConfig;
        int records = chance(0.1) ? between(100, 400) : between(3, 90);
        for (int p = 0; p < phases.size(); p++) {
            if (p > 0) {
                current = phases.get(p);
                Op c = new Op();
                c.kind = Kind.CONFIG;
                c.config = current;
                ops.add(c);
            }
            int n = records / phases.size() + 1;
            for (int r = 0; r < n; r++) {
                append();
                if (chance(0.08)) roll();
                if (chance(0.07)) clean(t + between(0, 60));
            }
        }
        // The last moments: around the delete horizon of what the last cleaning kept and around the
        // retention limit, with a little new dirty data before each (a round needs something dirty).
        long drNow = Long.parseLong((String) current.get("delete.retention.ms"));
        long retention = Long.parseLong((String) current.get("retention.ms"));
        long lag = Long.parseLong((String) current.get("min.compaction.lag.ms"));
        clean(t + lag + 1);
        for (int m = 0; m < 4; m++) {
            long base = lastClean;
            long target = switch (between(0, 3)) {
                case 0 -> base + drNow - 1;
                case 1 -> base + drNow;
                case 2 -> base + drNow + 1;
                default -> retention >= 0 ? t + retention + between(-1, 1) : base + drNow + between(0, 50);
            };
            for (int r = between(0, 3); r > 0; r--) append();
            if (chance(0.7)) roll();
            clean(Math.max(target, base) + (lag > 0 && chance(0.5) ? lag + 1 : 0));
        }
    }

    private byte[] newKey() {
        int kind = rnd.nextInt(20);
        String prefix = tp.topicId() + ":" + tp.topic() + ":" + tp.partition() + ":";
        String text;
        if (kind < 9) text = prefix + between(0, 10_000) + ":" + between(0, 9);
        else if (kind < 16) text = prefix + between(0, 10_000) + ":" + between(0, 9) + ":UPDATE";
        else if (kind == 16) return LEVEL_KEY.clone();
        else if (kind == 17) return new byte[0];
        else {
            byte[] g = new byte[between(1, 12)];
            rnd.nextBytes(g);
            return g;
        }
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private boolean compacted() {
        return ((String) current.get("cleanup.policy")).contains("compact");
    }

    private void append() {
        Op op = new Op();
        op.kind = Kind.APPEND;
        t += chance(0.15) ? 0 : between(1, 25);
        op.timestampMs = t;
        if (chance(0.1)) op.timestampMs = t - between(1, 40);
        else if (chance(0.02)) op.timestampMs = t + between(100, 1000);
        if (!compacted() && chance(0.4)) {
            op.key = null;
            op.what = "null key";
        } else {
            op.key = chance(0.05) ? newKey() : keys.get(rnd.nextInt(keys.size()));
            op.what = "keyed";
        }
        int v = rnd.nextInt(100);
        if (op.key != null && v < 18) {
            op.value = null;
            op.what = "tombstone";
        } else if (op.key != null && java.util.Arrays.equals(op.key, LEVEL_KEY)) {
            op.value = new byte[] {(byte) ('0' + between(0, 2))};
            op.what = "level record";
        } else if (v < 23) {
            op.value = new byte[between(1, 30)];
            rnd.nextBytes(op.value);
            op.what += ", undecodable value";
        } else if (v < 25) {
            op.value = new byte[0];
            op.what += ", empty value";
        } else {
            op.value = metadataValue();
            op.what += ", metadata value";
        }
        ops.add(op);
    }

    private byte[] metadataValue() {
        RemoteLogSegmentId id = new RemoteLogSegmentId(tp, new Uuid(rnd.nextLong(), rnd.nextLong()));
        int kind = rnd.nextInt(10);
        if (kind < 5) {
            long start = between(0, 100_000);
            TreeMap<Integer, Long> epochs = new TreeMap<>();
            epochs.put(between(0, 9), start);
            return SERDE.serialize(new RemoteLogSegmentMetadata(id, start, start + between(0, 1000), t, between(0, 5), t,
                    between(1, 1 << 20), Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs, chance(0.5)));
        } else if (kind < 9) {
            RemoteLogSegmentState[] states = {RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
                RemoteLogSegmentState.DELETE_SEGMENT_STARTED, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED};
            return SERDE.serialize(new RemoteLogSegmentMetadataUpdate(id, t, Optional.empty(),
                    states[rnd.nextInt(states.length)], between(0, 5)));
        }
        RemotePartitionDeleteState[] states = RemotePartitionDeleteState.values();
        return SERDE.serialize(new RemotePartitionDeleteMetadata(tp, states[rnd.nextInt(states.length)], t, between(0, 5)));
    }

    private void roll() {
        Op op = new Op();
        op.kind = Kind.ROLL;
        ops.add(op);
    }

    private void clean(long now) {
        now = Math.max(now, lastClean);
        Op op = new Op();
        op.kind = Kind.CLEAN;
        op.nowMs = now;
        ops.add(op);
        lastClean = now;
        t = Math.max(t, now);
    }
}
