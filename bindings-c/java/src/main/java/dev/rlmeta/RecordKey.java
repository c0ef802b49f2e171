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
public record RecordKey(
        String topicId, String topic, int partition, long endOffset, int brokerLeaderEpoch, boolean update) {

    /** The key text, as {@link RlMeta#keyFormat} gives it. */
    public String format() {
        return RlMeta.keyFormat(topicId, topic, partition, endOffset, brokerLeaderEpoch, update);
    }

    /** Parses key text, as {@link RlMeta#keyParse} does. */
    public static RecordKey parse(String key) {
        return RlMeta.keyParse(key);
    }
}
