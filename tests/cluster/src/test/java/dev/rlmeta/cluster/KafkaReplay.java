package dev.rlmeta.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kafka's own replay of {@code __remote_log_metadata}, the truth a broker's cache is judged by: the
 * stock {@code RemotePartitionMetadataStore} and {@code RemoteLogMetadataSerde} of the brokers'
 * Kafka version, loaded in the test process from that version's class path (a class loader of its
 * own, so a 3.9.2 cluster is judged by 3.9.2's classes, not this module's 4.4.0), fed as Kafka's
 * ConsumerTask feeds them: every user partition loaded, every record of it in offset order
 * deserialized by Kafka and handed to {@code handleRemoteLogMetadata}, then marked initialized.
 * Tombstones and level records are not given to Kafka (a stock consumer task has no use for them);
 * an event Kafka throws on is skipped and counted, as its consumer would stop on it.
 *
 * <p>Stock Kafka (4.4.0 and before) reads only version-0 values, and the plugin writes version 1 at
 * levels 1 and 2 (KIP-1266: the same fields plus the tagged BrokerLeaderEpoch, and an update's or a
 * partition deletion's EndOffset, which Kafka's store never reads). Each value is given to Kafka as
 * its version-0 form: decoded and encoded again by rlmeta's codec with those tagged fields dropped
 * ({@link #asVersion0}); every field Kafka's store reads is carried over as it was.
 *
 * <p>It reaches the store's package-private queries by reflection; it computes nothing itself.
 */
public final class KafkaReplay {
    private static final String PKG = "org.apache.kafka.server.log.remote.metadata.storage";
    private static final Map<String, ClassLoader> LOADERS = new ConcurrentHashMap<>();

    private final Object store;
    private final Map<String, Object> partitions = new LinkedHashMap<>(); // "topicId:partition" -> Kafka's TopicIdPartition
    private final Method listSegments;
    private final Method segmentFor;
    private final Method highestOffset;
    private final Accessors seg;
    /** Events Kafka threw on (skipped), by exception class. */
    public final Map<String, Integer> thrown = new TreeMap<>();

    /** The class loader of a Kafka version's stock classes (one per version, kept for the run). */
    static ClassLoader loader(KafkaVersion kafka) {
        return LOADERS.computeIfAbsent(kafka.version(), v -> {
            try {
                List<URL> urls = new ArrayList<>();
                for (String e : Files.readString(kafka.classPathFile()).trim().split(java.io.File.pathSeparator)) {
                    urls.add(Path.of(e).toUri().toURL());
                }
                return new URLClassLoader("kafka-" + v, urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
            } catch (MalformedURLException e) {
                throw new IllegalStateException(e);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private final Object serde;
    private final Method deserialize;
    private final Method tipOf;
    private final Method topicId;
    private final Method partition;
    private final Method topic;
    private final Method uuidFromString;
    private final Method load;
    private final Method handle;
    private final Method mark;
    private final Class<?> tipClass;
    private final Class<?> uuidClass;
    private Set<String> onlyTopicIds; // null: every partition

    /** From now on, replays only the partitions of these topics (by id), as a broker holding only them. */
    public KafkaReplay only(Set<String> topicIds) {
        this.onlyTopicIds = topicIds;
        return this;
    }

    /**
     * Replays the records (in offset order within each metadata partition) for every user partition
     * they name, with the stock classes of `kafka`.
     */
    public KafkaReplay(KafkaVersion kafka, List<MetaTopic.Rec> records) throws ReflectiveOperationException {
        this(kafka);
        List<MetaTopic.Rec> ordered = new ArrayList<>(records);
        ordered.sort(Comparator.comparingInt(MetaTopic.Rec::partition).thenComparingLong(MetaTopic.Rec::offset));
        for (MetaTopic.Rec r : ordered) {
            if (!r.tombstone() && !r.levelRecord()) {
                replay(r.value());
            }
        }
        finish();
    }

    /**
     * An empty replay: hand it each record's value with {@link #replay} (in offset order within each
     * metadata partition; tombstones and level records left out), then call {@link #finish}. For a
     * topic too large to hold as records.
     */
    public KafkaReplay(KafkaVersion kafka) throws ReflectiveOperationException {
        ClassLoader l = loader(kafka);
        Class<?> storeClass = l.loadClass(PKG + ".RemotePartitionMetadataStore");
        tipClass = l.loadClass("org.apache.kafka.common.TopicIdPartition");
        uuidClass = l.loadClass("org.apache.kafka.common.Uuid");
        Class<?> metaClass = l.loadClass("org.apache.kafka.server.log.remote.storage.RemoteLogMetadata");
        serde = l.loadClass(PKG + ".serialization.RemoteLogMetadataSerde").getConstructor().newInstance();
        deserialize = serde.getClass().getMethod("deserialize", byte[].class);
        tipOf = metaClass.getMethod("topicIdPartition");
        topicId = tipClass.getMethod("topicId");
        partition = tipClass.getMethod("partition");
        topic = tipClass.getMethod("topic");
        uuidFromString = uuidClass.getMethod("fromString", String.class);
        store = storeClass.getConstructor().newInstance();
        load = storeClass.getMethod("maybeLoadPartition", tipClass);
        handle = storeClass.getMethod("handleRemoteLogMetadata", metaClass);
        mark = storeClass.getMethod("markInitialized", tipClass);
        listSegments = storeClass.getDeclaredMethod("listRemoteLogSegments", tipClass);
        segmentFor = storeClass.getDeclaredMethod("remoteLogSegmentMetadata", tipClass, long.class, int.class);
        highestOffset = storeClass.getDeclaredMethod("highestLogOffset", tipClass, int.class);
        listSegments.setAccessible(true);
        segmentFor.setAccessible(true);
        highestOffset.setAccessible(true);
        seg = new Accessors(l);
    }

    /** Gives Kafka's store one record's value, as its ConsumerTask does (the partition loaded first). */
    public void replay(byte[] value) throws ReflectiveOperationException {
        Object m;
        Object tp;
        try {
            m = deserialize.invoke(serde, (Object) asVersion0(value));
            tp = tipOf.invoke(m);
        } catch (InvocationTargetException e) {
            thrown.merge("deserialize: " + e.getCause().getClass().getSimpleName(), 1, Integer::sum);
            return;
        }
        if (onlyTopicIds != null && !onlyTopicIds.contains(topicId.invoke(tp).toString())) {
            return; // not held: as a broker's ConsumerTask skips the partitions it is not assigned
        }
        String key = topicId.invoke(tp) + ":" + partition.invoke(tp);
        if (!partitions.containsKey(key)) {
            // a fresh TopicIdPartition of Kafka's classes, as ConsumerTask loads an assigned partition
            Object fresh = tipClass.getConstructor(uuidClass, int.class, String.class).newInstance(
                    uuidFromString.invoke(null, topicId.invoke(tp).toString()), partition.invoke(tp), topic.invoke(tp));
            partitions.put(key, fresh);
            load.invoke(store, fresh);
        }
        try {
            handle.invoke(store, m);
        } catch (InvocationTargetException e) {
            thrown.merge(e.getCause().getClass().getSimpleName(), 1, Integer::sum);
        }
    }

    /** Marks every replayed partition initialized (the replay has read the topic to its end). */
    public void finish() throws ReflectiveOperationException {
        for (Object tp : partitions.values()) {
            mark.invoke(store, tp);
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    /** A value as version 0: unchanged if it is, else without the tagged fields only version 1 has. */
    static byte[] asVersion0(byte[] value) {
        if (value.length > 2 && value[0] == 1 && value[1] >= 0 && value[1] < 4 && value[2] == 0) {
            return value; // frame version 1, api key 0..3, version 0 (one varint byte each): Kafka's own already
        }
        try {
            com.fasterxml.jackson.databind.node.ObjectNode v =
                    (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(dev.rlmeta.RlMeta.decodeValueJson(value));
            if (v.get("version").asInt() == 0) {
                return value;
            }
            com.fasterxml.jackson.databind.node.ObjectNode r = (com.fasterxml.jackson.databind.node.ObjectNode) v.get("record");
            r.remove("brokerLeaderEpoch");
            if (v.get("apiKey").asInt() != 0) { // a segment record's endOffset is its own field since version 0
                r.remove("endOffset");
            }
            v.put("version", 0);
            return dev.rlmeta.RlMeta.encodeValueJson(JSON.writeValueAsString(v));
        } catch (IOException | RuntimeException e) {
            return value; // Kafka's serde reports what it cannot read
        }
    }

    /** The user partitions the records name ("topicId:partition"). */
    public Set<String> partitions() {
        return partitions.keySet();
    }

    /** The topic name of a replayed partition (a key of {@link #partitions}: "topicId:partition"). */
    public String topicName(String key) throws ReflectiveOperationException {
        Object tp = partitions.get(key);
        return tp == null ? null : (String) tp.getClass().getMethod("topic").invoke(tp);
    }

    /**
     * Kafka's {@code listRemoteLogSegments(tp)}, each segment as {@link #describe}, by start offset
     * then id; empty for a partition no record names.
     */
    public List<String> segments(String topicId, int partition) throws ReflectiveOperationException {
        Object tp = partitions.get(topicId + ":" + partition);
        List<String> out = new ArrayList<>();
        if (tp == null) {
            return out;
        }
        java.util.Iterator<?> it = (java.util.Iterator<?>) listSegments.invoke(store, tp);
        List<Object> all = new ArrayList<>();
        it.forEachRemaining(all::add);
        for (Object m : all) {
            out.add(seg.describe(m));
        }
        out.sort(Comparator.comparingLong((String s) -> Long.parseLong(s.split(" ")[2].split("-")[0]))
                .thenComparing(s -> s.split(" ")[0]));
        return out;
    }

    /** Kafka's {@code remoteLogSegmentMetadata(tp, epoch, offset)}: the segment's id, or null. */
    public String segmentFor(String topicId, int partition, int epoch, long offset) throws ReflectiveOperationException {
        Object tp = partitions.get(topicId + ":" + partition);
        if (tp == null) {
            return null;
        }
        Optional<?> m = (Optional<?>) invoke(segmentFor, tp, offset, epoch);
        return m.isPresent() ? seg.id(m.get()) : null;
    }

    /** Kafka's {@code highestOffsetForEpoch(tp, epoch)}, or null. */
    public Long highestOffsetForEpoch(String topicId, int partition, int epoch) throws ReflectiveOperationException {
        Object tp = partitions.get(topicId + ":" + partition);
        if (tp == null) {
            return null;
        }
        Optional<?> o = (Optional<?>) invoke(highestOffset, tp, epoch);
        return (Long) o.orElse(null);
    }

    private Object invoke(Method m, Object... args) throws ReflectiveOperationException {
        try {
            return m.invoke(store, args);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("Kafka's store threw on " + m.getName() + ": " + e.getCause(), e.getCause());
        }
    }

    /**
     * A segment as one line: "id state start-end broker=B epochs={e=o, ...} size=S maxTs=T eventTs=T".
     * The same text {@link ReassignmentTest} makes of a dumped segment.
     */
    public static String line(String id, int state, long start, long end, int broker, Map<Integer, Long> epochs,
                              long size, long maxTs, long eventTs) {
        return id + " " + state + " " + start + "-" + end + " broker=" + broker + " epochs=" + new TreeMap<>(epochs)
                + " size=" + size + " maxTs=" + maxTs + " eventTs=" + eventTs;
    }

    /** RemoteLogSegmentMetadata's getters, of the version's classes. */
    private static final class Accessors {
        final Method segmentId;
        final Method id;
        final Method state;
        final Method stateId;
        final Method start;
        final Method end;
        final Method broker;
        final Method epochs;
        final Method size;
        final Method maxTs;
        final Method eventTs;

        Accessors(ClassLoader l) throws ReflectiveOperationException {
            Class<?> m = l.loadClass("org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata");
            segmentId = m.getMethod("remoteLogSegmentId");
            id = l.loadClass("org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId").getMethod("id");
            state = m.getMethod("state");
            stateId = l.loadClass("org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState").getMethod("id");
            start = m.getMethod("startOffset");
            end = m.getMethod("endOffset");
            broker = m.getMethod("brokerId");
            epochs = m.getMethod("segmentLeaderEpochs");
            size = m.getMethod("segmentSizeInBytes");
            maxTs = m.getMethod("maxTimestampMs");
            eventTs = m.getMethod("eventTimestampMs");
        }

        String id(Object m) throws ReflectiveOperationException {
            return id.invoke(segmentId.invoke(m)).toString();
        }

        @SuppressWarnings("unchecked")
        String describe(Object m) throws ReflectiveOperationException {
            return line(id(m), ((Number) stateId.invoke(state.invoke(m))).intValue(), (long) start.invoke(m),
                    (long) end.invoke(m), (int) broker.invoke(m), (Map<Integer, Long>) epochs.invoke(m),
                    ((Number) size.invoke(m)).longValue(), (long) maxTs.invoke(m), (long) eventTs.invoke(m));
        }
    }
}
