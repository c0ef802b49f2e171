package dev.rlmeta;

/**
 * The fields of a KIP-1266 record key of {@code __remote_log_metadata}:
 * {@code TopicId:Topic:Partition:EndOffset:BrokerLeaderEpoch[:UPDATE]}.
 *
 * @param topicId the topic id in Kafka's 22-character base64 form
 * @param topic the topic name
 * @param partition the user partition
 * @param endOffset the end offset of the segment (or of the partition, for partition-delete records)
 * @param brokerLeaderEpoch the leader epoch of the broker that writes the record
 * @param update true for {@code :UPDATE} keys (update and partition-delete records)
 */
public final class RecordKey {
    // a class, not a record: the library is compiled for Java 11 (Kafka 3.x brokers run on it)
    private final String topicId;
    private final String topic;
    private final int partition;
    private final long endOffset;
    private final int brokerLeaderEpoch;
    private final boolean update;

    /** The key's fields (called from native code with this signature). */
    public RecordKey(String topicId, String topic, int partition, long endOffset, int brokerLeaderEpoch,
                     boolean update) {
        this.topicId = topicId;
        this.topic = topic;
        this.partition = partition;
        this.endOffset = endOffset;
        this.brokerLeaderEpoch = brokerLeaderEpoch;
        this.update = update;
    }

    public String topicId() { return topicId; }
    public String topic() { return topic; }
    public int partition() { return partition; }
    public long endOffset() { return endOffset; }
    public int brokerLeaderEpoch() { return brokerLeaderEpoch; }
    public boolean update() { return update; }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof RecordKey)) {
            return false;
        }
        RecordKey k = (RecordKey) o;
        return partition == k.partition && endOffset == k.endOffset && brokerLeaderEpoch == k.brokerLeaderEpoch
                && update == k.update && java.util.Objects.equals(topicId, k.topicId)
                && java.util.Objects.equals(topic, k.topic);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(topicId, topic, partition, endOffset, brokerLeaderEpoch, update);
    }

    @Override
    public String toString() {
        return "RecordKey[topicId=" + topicId + ", topic=" + topic + ", partition=" + partition + ", endOffset="
                + endOffset + ", brokerLeaderEpoch=" + brokerLeaderEpoch + ", update=" + update + "]";
    }

    /** The key text, as {@link RlMeta#keyFormat} gives it. */
    public String format() {
        return RlMeta.keyFormat(topicId, topic, partition, endOffset, brokerLeaderEpoch, update);
    }

    /** Parses key text, as {@link RlMeta#keyParse} does. */
    public static RecordKey parse(String key) {
        return RlMeta.keyParse(key);
    }
}
