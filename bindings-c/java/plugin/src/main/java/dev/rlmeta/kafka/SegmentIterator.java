package dev.rlmeta.kafka;

import dev.rlmeta.PackedValues;
import java.util.Iterator;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;

/**
 * What {@code listRemoteLogSegments} hands the broker: the store's listing (a packed snapshot: the
 * segments copied under the store's read lock, encoded after it), each segment turned into
 * Kafka's object by Kafka's own serde only when the broker reaches it. The broker's retention loop
 * often stops at the first segment it keeps; the rest then cost nothing. Converts, never decides:
 * the order and the content are the store's.
 */
final class SegmentIterator implements Iterator<RemoteLogSegmentMetadata> {
    private final PackedValues values;
    private final RemoteLogMetadataSerde serde;

    SegmentIterator(PackedValues values, RemoteLogMetadataSerde serde) {
        this.values = values;
        this.serde = serde;
    }

    @Override
    public boolean hasNext() {
        return values.hasNext();
    }

    @Override
    public RemoteLogSegmentMetadata next() {
        return (RemoteLogSegmentMetadata) serde.deserialize(values.next());
    }
}
