package dev.rlmeta.kafka;

import java.util.Map;

/**
 * The plugin's own metrics, registered as {@code dev.rlmeta:type=RemoteLogMetadataManager} in the
 * platform MBean server while an instance is configured and not closed (a second instance in the
 * same JVM adds {@code ,instance=N}). An MXBean: every attribute is an open type, so a JMX client
 * reads it without the plugin's classes. Arrays are indexed by metadata partition. Names in
 * docs/PLUGIN.md.
 */
public interface RemoteLogMetadataManagerMXBean {
    /** Consumed records by outcome, under the core's outcome names ("applied", "tombstone", ...). */
    Map<String, Long> getRecordsByOutcome();

    /** Per metadata partition: the next offset to apply (every record before it is applied), or -1 if not assigned. */
    long[] getAppliedOffsets();

    /** Per metadata partition: records between the applied offset and the partition's end, or -1 if unknown. */
    long[] getLag();

    /** Per metadata partition: assigned, and every held user partition in it initialized (read to its end). */
    boolean[] getInitialized();

    /** Per metadata partition: the remote.log.metadata.version level writes use now (0..2), or -1 while unknown. */
    int[] getWriteLevels();

    /** How many times the store was dropped and rebuilt from the topic. */
    long getRebuilds();

    /** How many times the consumer thread was restarted after it died. */
    long getConsumerRestarts();

    /** Whether lookups are served (false while a rebuild or a restart is under way). */
    boolean isServing();

    /** The last failure that made the plugin rebuild or restart (or stop initializing), or null. */
    String getLastError();

    /** Records the backfill wrote (segments written before KIP-1266, keyed again) since configure(). */
    long getBackfillRecordsWritten();

    /** User partitions this broker leads, at level 1 or 2, whose backfill is not done in this leadership term. */
    int getBackfillPartitionsPending();

    /** User partitions whose backfill finished (an empty plan) since configure(), once per leadership term. */
    long getBackfillPartitionsDone();

    /** The last backfill refusal or failure (retried), or null. */
    String getBackfillLastError();
}
