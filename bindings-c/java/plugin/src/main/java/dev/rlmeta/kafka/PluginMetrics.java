package dev.rlmeta.kafka;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.Outcome;

/**
 * The plugin's MBean ({@link RemoteLogMetadataManagerMXBean}) and the same attributes as single
 * values for Kafka's own metrics ({@link #gauges}, registered by
 * MonitorableRlmetaRemoteLogMetadataManager on 4.1+): reads what the consumer keeps; decides
 * nothing, and never touches a Kafka metrics class (this class links on every Kafka 3.7..4.4).
 */
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

    /** One value for Kafka's metrics: a name, its description, its tags, and how to read it now. */
    static final class Gauge {
        final String name;
        final String description;
        final Map<String, String> tags;
        final Supplier<Object> value;

        Gauge(String name, String description, Map<String, String> tags, Supplier<Object> value) {
            this.name = name;
            this.description = description;
            this.tags = tags;
            this.value = value;
        }
    }

    /**
     * Every attribute of {@link RemoteLogMetadataManagerMXBean} (the one table) as single values: the
     * attribute's name in kebab case (AppliedOffsets: applied-offsets, isServing: serving), described by
     * its {@link RemoteLogMetadataManagerMXBean.Doc}; an array attribute gives one value per metadata
     * partition (tag metadata-partition), RecordsByOutcome one per outcome (tag outcome); a boolean
     * reads 1 or 0. Sorted by name, then tags.
     */
    List<Gauge> gauges() {
        List<Gauge> out = new ArrayList<>();
        for (Method m : RemoteLogMetadataManagerMXBean.class.getMethods()) {
            RemoteLogMetadataManagerMXBean.Doc doc = m.getAnnotation(RemoteLogMetadataManagerMXBean.Doc.class);
            if (doc == null) {
                continue;
            }
            String name = kebab(m.getName().replaceFirst("^(get|is)", ""));
            Class<?> type = m.getReturnType();
            if (type.isArray()) {
                for (int p = 0; p < numPartitions; p++) {
                    int at = p;
                    out.add(new Gauge(name, doc.value(), Map.of("metadata-partition", Integer.toString(p)),
                            () -> number(Array.get(read(m), at))));
                }
            } else if (Map.class.isAssignableFrom(type)) {
                for (int c = 0; c < Outcome.COUNT; c++) {
                    String outcome = MetadataConsumer.outcomeName((byte) c);
                    out.add(new Gauge(name, doc.value(), Map.of("outcome", outcome),
                            () -> ((Map<?, ?>) read(m)).get(outcome)));
                }
            } else {
                out.add(new Gauge(name, doc.value(), Map.of(), () -> number(read(m))));
            }
        }
        out.sort(Comparator.comparing((Gauge g) -> g.name).thenComparing(g -> g.tags.toString()));
        return out;
    }

    /** "AppliedOffsets" -> "applied-offsets". */
    static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    private Object read(Method getter) {
        try {
            return getter.invoke(this);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("reading " + getter.getName(), e);
        }
    }

    private static Object number(Object v) {
        return v instanceof Boolean ? (Object) ((Boolean) v ? 1L : 0L) : v;
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
