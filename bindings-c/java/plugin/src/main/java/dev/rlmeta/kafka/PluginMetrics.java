package dev.rlmeta.kafka;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.Outcome;

/** The plugin's MBean ({@link RemoteLogMetadataManagerMXBean}): reads what the consumer keeps; decides nothing. */
final class PluginMetrics implements RemoteLogMetadataManagerMXBean {
    private static final Logger log = LoggerFactory.getLogger(PluginMetrics.class);
    static final String NAME = "dev.rlmeta:type=RemoteLogMetadataManager";

    private final MetadataConsumer consumer;
    private final int numPartitions;
    private final Backfill backfill;
    private volatile String initError;
    private ObjectName registered;

    PluginMetrics(MetadataConsumer consumer, int numPartitions, Backfill backfill) {
        this.consumer = consumer;
        this.numPartitions = numPartitions;
        this.backfill = backfill;
    }

    /** Registers under {@link #NAME}, or {@code NAME,instance=N} if another instance in this JVM holds it. */
    synchronized void register() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (int n = 1; n < 1000 && registered == null; n++) {
            try {
                ObjectName name = new ObjectName(n == 1 ? NAME : NAME + ",instance=" + n);
                server.registerMBean(this, name);
                registered = name;
            } catch (InstanceAlreadyExistsException taken) {
                // another instance in this JVM (tests): the next name
            } catch (JMException | RuntimeException e) {
                log.warn("rlmeta RLMM could not register its MBean: {}", e.toString());
                return;
            }
        }
    }

    synchronized ObjectName name() {
        return registered;
    }

    synchronized void unregister() {
        if (registered == null) {
            return;
        }
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(registered);
        } catch (JMException e) {
            log.debug("unregistering {}", registered, e);
        }
        registered = null;
    }

    void initializationFailed(String why) {
        initError = why;
    }

    @Override
    public Map<String, Long> getRecordsByOutcome() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int c = 0; c < Outcome.COUNT; c++) {
            m.put(MetadataConsumer.outcomeName((byte) c), consumer.count((byte) c));
        }
        return m;
    }

    @Override
    public long[] getAppliedOffsets() {
        long[] a = new long[numPartitions];
        for (int p = 0; p < numPartitions; p++) {
            a[p] = consumer.appliedOffset(p);
        }
        return a;
    }

    @Override
    public long[] getLag() {
        long[] a = new long[numPartitions];
        for (int p = 0; p < numPartitions; p++) {
            a[p] = consumer.lag(p);
        }
        return a;
    }

    @Override
    public boolean[] getInitialized() {
        boolean[] a = new boolean[numPartitions];
        for (int p = 0; p < numPartitions; p++) {
            a[p] = consumer.initialized(p);
        }
        return a;
    }

    @Override
    public int[] getWriteLevels() {
        int[] a = new int[numPartitions];
        for (int p = 0; p < numPartitions; p++) {
            a[p] = consumer.level(p);
        }
        return a;
    }

    @Override
    public long getRebuilds() {
        return consumer.rebuilds();
    }

    @Override
    public long getConsumerRestarts() {
        return consumer.restarts();
    }

    @Override
    public boolean isServing() {
        return consumer.serving();
    }

    @Override
    public String getLastError() {
        String e = consumer.lastError();
        return e != null ? e : initError;
    }

    @Override
    public long getBackfillRecordsWritten() {
        return backfill.recordsWritten();
    }

    @Override
    public int getBackfillPartitionsPending() {
        return backfill.partitionsPending();
    }

    @Override
    public long getBackfillPartitionsDone() {
        return backfill.partitionsDone();
    }

    @Override
    public String getBackfillLastError() {
        return backfill.lastError();
    }
}
