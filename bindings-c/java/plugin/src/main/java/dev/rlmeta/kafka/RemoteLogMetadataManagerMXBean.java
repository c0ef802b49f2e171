package dev.rlmeta.kafka;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Map;

/**
 * The plugin's own metrics, registered as {@code dev.rlmeta:type=RemoteLogMetadataManager} in the
 * platform MBean server while an instance is configured and not closed (a second instance in the
 * same JVM adds {@code ,instance=N}). An MXBean: every attribute is an open type, so a JMX client
 * reads it without the plugin's classes. Arrays are indexed by metadata partition. Names in
 * docs/PLUGIN.md. The same values, numbers only, one MBean per metadata partition and per outcome,
 * are registered beside it (PluginMetrics), for exporters that skip arrays and maps.
 *
 * <p>This interface is the one table of the plugin's metrics: on Kafka 4.1+ the same attributes are
 * also registered with Kafka's own metrics (KIP-877, {@link PluginMetrics#gauges}), named from the
 * attribute and described by its {@link Doc}.
 */
public interface RemoteLogMetadataManagerMXBean {
    /** What an attribute means (the metric's description where Kafka's metrics carry it). */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface Doc {
        String value();
    }

    @Doc("Consumed records by outcome, under the core's outcome names (\"applied\", \"tombstone\", ...).")
    Map<String, Long> getRecordsByOutcome();

    @Doc("Per metadata partition: the next offset to apply (every record before it is applied), or -1 if not assigned.")
    long[] getAppliedOffsets();

    @Doc("Per metadata partition: records between the applied offset and the partition's end, or -1 if unknown.")
    long[] getLag();

    @Doc("Per metadata partition: assigned, and every held user partition in it initialized (read to its end).")
    boolean[] getInitialized();

    @Doc("Per metadata partition: the remote.log.metadata.version level writes use now (0..2), or -1 while unknown.")
    int[] getWriteLevels();

    @Doc("Per metadata partition: remote segments the store lists (Kafka's listRemoteLogSegments) for the initialized user partitions this broker holds in it.")
    long[] getSegments();

    @Doc("Bytes of native memory (outside the JVM heap) the metadata cache holds, by the core's own account of its structures (the allocator's overhead not counted); recounted at most every 10 s.")
    long getStoreBytes();

    @Doc("Milliseconds from configure() until every user partition first held was initialized (read to its metadata partition's end), or -1 until then.")
    long getBootstrapTimeMs();

    @Doc("The broker's node.id (broker.id), or -1 if the configuration had none.")
    int getBrokerId();

    @Doc("How many times the store, or one metadata partition of it, was dropped and rebuilt from the topic.")
    long getRebuilds();

    @Doc("How many times the consumer thread was restarted after it died.")
    long getConsumerRestarts();

    @Doc("Times a thread of the plugin died (an Error included), each logged at ERROR with the thread's name: the consumer thread is replaced with a rebuild, the others start their work again after a backoff.")
    long getThreadDeaths();

    @Doc("Per metadata partition: stopped after the same records failed to apply again and again; its user partitions stay unavailable on this broker until it restarts.")
    boolean[] getStopped();

    @Doc("Whether lookups are served (false while a rebuild or a restart is under way).")
    boolean isServing();

    @Doc("The last failure that made the plugin rebuild or restart (or stop initializing), or null.")
    String getLastError();

    @Doc("Records the backfill wrote (segments written before KIP-1266, keyed again) since configure().")
    long getBackfillRecordsWritten();

    @Doc("User partitions this broker leads, at level 1 or 2, whose backfill is not done in this leadership term.")
    int getBackfillPartitionsPending();

    @Doc("User partitions whose backfill finished (an empty plan) since configure(), once per leadership term.")
    long getBackfillPartitionsDone();

    @Doc("The last backfill refusal or failure (retried), or null.")
    String getBackfillLastError();
}
