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
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.kafka.common.TopicIdPartition;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.Outcome;
import dev.rlmeta.RlMetaException;

/**
 * The plugin's MBeans and the same values for Kafka's own metrics: reads what the consumer, the
 * backfill and the store keep; decides nothing, and never touches a Kafka metrics class (this
 * class links on every Kafka 3.7..4.4).
 *
 * <p>One table, {@link RemoteLogMetadataManagerMXBean}, three views of it:
 * <ul>
 * <li>the aggregate MXBean {@link #NAME}, every attribute (its arrays and map are for JMX clients;
 *     the Prometheus JMX exporter skips them);</li>
 * <li>single values ({@link #gauges}): an array attribute gives one value per metadata partition
 *     (tag {@code metadata-partition}), the map one per outcome (tag {@code outcome}); Kafka's
 *     metrics on 4.1+ (MonitorableRlmetaRemoteLogMetadataManager) register exactly these;</li>
 * <li>the same tagged values as MBeans in Kafka's shape, numbers only, one per entity:
 *     {@code NAME,topic=<metadata topic>,partition=P} (the tags of Kafka's partition MBeans, e.g.
 *     {@code kafka.log:type=Log,name=Size,topic=T,partition=P}) with one attribute per array
 *     attribute, and {@code NAME,outcome=O} with {@code RecordsByOutcome}; attributes named as the
 *     aggregate's, as Kafka's JmxReporter names a metric group's attributes after its metrics. These
 *     are what ops/prometheus/jmx-exporter-rlmeta.yml maps to Prometheus series.</li>
 * </ul>
 * Under the plugin's own domain, not {@code kafka.*}: Kafka's domains are Kafka's (on 4.1+ Kafka
 * itself registers the plugin's metrics under {@code kafka.server:type=plugins}).
 */
final class PluginMetrics implements RemoteLogMetadataManagerMXBean {
    private static final Logger log = LoggerFactory.getLogger(PluginMetrics.class);
    static final String NAME = "dev.rlmeta:type=RemoteLogMetadataManager";

    /** How long a count of the store's segments is reused: every partition's MBean reads it. */
    static final long SEGMENTS_CACHE_NANOS = 1_000_000_000L;
    /** How long the store's memory account is reused: it walks every held segment under the store's read lock. */
    static final long STORE_BYTES_CACHE_NANOS = 10_000_000_000L;

    private final MetadataConsumer consumer;
    private final int numPartitions;
    private final Backfill backfill;
    private final String topic;
    private final int brokerId;
    private final StartupTimeline timeline;
    private final Supplier<MetadataStore> store;
    private final Set<TopicIdPartition> held;
    private final ThreadGuard guard;
    private volatile String initError;
    private ObjectName registered;
    private final List<ObjectName> tagged = new ArrayList<>();
    private final Recounted<long[]> segmentCounts;
    private final Recounted<Long> storeBytes = new Recounted<>(STORE_BYTES_CACHE_NANOS, () -> 0L);

    /**
     * @param store the store lookups use now (replaced on a rebuild; null once closed)
     * @param held the user partitions the store holds (read only)
     */
    PluginMetrics(MetadataConsumer consumer, int numPartitions, Backfill backfill, String topic, int brokerId,
                  StartupTimeline timeline, Supplier<MetadataStore> store, Set<TopicIdPartition> held,
                  ThreadGuard guard) {
        this.guard = guard;
        this.consumer = consumer;
        this.numPartitions = numPartitions;
        this.segmentCounts = new Recounted<>(SEGMENTS_CACHE_NANOS, () -> new long[numPartitions]);
        this.backfill = backfill;
        this.topic = topic;
        this.brokerId = brokerId;
        this.timeline = timeline;
        this.store = store;
        this.held = held;
    }

    /**
     * Registers the aggregate under {@link #NAME}, or {@code NAME,instance=N} if another instance in
     * this JVM holds it, then the tagged MBeans under that name plus their tags.
     */
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
        if (registered == null) {
            return;
        }
        Map<String, List<Gauge>> byEntity = new TreeMap<>();
        for (Gauge g : gauges()) {
            String p = g.tags.get("metadata-partition");
            String o = g.tags.get("outcome");
            String keys = p != null ? ",topic=" + topic + ",partition=" + p
                    : o != null ? ",outcome=" + o : null;
            if (keys != null) {
                byEntity.computeIfAbsent(keys, k -> new ArrayList<>()).add(g);
            }
        }
        for (Map.Entry<String, List<Gauge>> e : byEntity.entrySet()) {
            try {
                ObjectName name = new ObjectName(registered + e.getKey());
                server.registerMBean(new Tagged(e.getValue()), name);
                tagged.add(name);
            } catch (JMException | RuntimeException ex) {
                log.warn("rlmeta RLMM could not register the MBean {}{}: {}", registered, e.getKey(), ex.toString());
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
        List<ObjectName> all = new ArrayList<>(tagged);
        all.add(registered);
        for (ObjectName n : all) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(n);
            } catch (JMException e) {
                log.debug("unregistering {}", n, e);
            }
        }
        tagged.clear();
        registered = null;
    }

    /**
     * One entity's values (a metadata partition's, an outcome's) as an MBean: a number per attribute,
     * read when asked. A DynamicMBean because its attributes are the aggregate's, found by reflection.
     */
    private static final class Tagged implements DynamicMBean {
        private final Map<String, Gauge> byAttribute = new LinkedHashMap<>();
        private final MBeanInfo info;

        Tagged(List<Gauge> gauges) {
            List<MBeanAttributeInfo> attributes = new ArrayList<>();
            for (Gauge g : gauges) {
                byAttribute.put(g.attribute, g);
                attributes.add(new MBeanAttributeInfo(g.attribute, g.type.getName(), g.description, true, false, false));
            }
            info = new MBeanInfo(Tagged.class.getName(), "rlmeta RLMM values of one " + String.join(",",
                    gauges.get(0).tags.keySet()), attributes.toArray(new MBeanAttributeInfo[0]), null, null, null);
        }

        @Override
        public Object getAttribute(String attribute) throws AttributeNotFoundException {
            Gauge g = byAttribute.get(attribute);
            if (g == null) {
                throw new AttributeNotFoundException("no attribute " + attribute);
            }
            return g.value.get();
        }

        @Override
        public AttributeList getAttributes(String[] attributes) {
            AttributeList out = new AttributeList();
            for (String a : attributes) {
                Gauge g = byAttribute.get(a);
                if (g != null) {
                    out.add(new Attribute(a, g.value.get()));
                }
            }
            return out;
        }

        @Override
        public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
            throw new AttributeNotFoundException("read only: " + attribute.getName());
        }

        @Override
        public AttributeList setAttributes(AttributeList attributes) {
            return new AttributeList();
        }

        @Override
        public Object invoke(String actionName, Object[] params, String[] signature) {
            throw new UnsupportedOperationException("no operations");
        }

        @Override
        public MBeanInfo getMBeanInfo() {
            return info;
        }
    }

    /** One value for Kafka's metrics: a name, its description, its tags, and how to read it now. */
    static final class Gauge {
        final String name;
        final String attribute; // the aggregate MBean's attribute it comes from
        final Class<?> type;    // of the value: Long, Integer or String
        final String description;
        final Map<String, String> tags;
        final Supplier<Object> value;

        Gauge(String name, String attribute, Class<?> type, String description, Map<String, String> tags,
              Supplier<Object> value) {
            this.name = name;
            this.attribute = attribute;
            this.type = type;
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
            String attribute = m.getName().replaceFirst("^(get|is)", "");
            String name = kebab(attribute);
            Class<?> type = m.getReturnType();
            if (type.isArray()) {
                Class<?> element = valueType(type.getComponentType());
                for (int p = 0; p < numPartitions; p++) {
                    int at = p;
                    out.add(new Gauge(name, attribute, element, doc.value(),
                            Map.of("metadata-partition", Integer.toString(p)), () -> number(Array.get(read(m), at))));
                }
            } else if (Map.class.isAssignableFrom(type)) {
                for (int c = 0; c < Outcome.COUNT; c++) {
                    String outcome = MetadataConsumer.outcomeName((byte) c);
                    out.add(new Gauge(name, attribute, Long.class, doc.value(), Map.of("outcome", outcome),
                            () -> ((Map<?, ?>) read(m)).get(outcome)));
                }
            } else {
                out.add(new Gauge(name, attribute, valueType(type), doc.value(), Map.of(), () -> number(read(m))));
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

    /** The boxed type a getter's value has once {@link #number} read it. */
    private static Class<?> valueType(Class<?> t) {
        return t == long.class || t == boolean.class ? Long.class : t == int.class ? Integer.class : t;
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
    public long[] getSegments() {
        return segmentCounts.get(() -> {
            long[] a = new long[numPartitions];
            MetadataStore s = store.get();
            if (s == null) {
                return a;
            }
            for (TopicIdPartition tp : held) {
                try {
                    a[RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions)] += s.segmentCount(
                            tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(), tp.partition());
                } catch (RlMetaException.NotInitialized | RlMetaException.NotFound e) {
                    // not read to its end yet, or unloaded meanwhile: no segments to serve
                }
            }
            return a;
        }).clone();
    }

    @Override
    public long getStoreBytes() {
        return storeBytes.get(() -> {
            MetadataStore s = store.get();
            return s == null ? 0L : s.memoryBytes();
        });
    }

    /**
     * A figure counted from the store at most once a period (every MBean of a scrape reads it, and a
     * count holds the store's read lock); the last count, or the empty one, if the store is replaced
     * (a rebuild) or closed under a count.
     */
    private static final class Recounted<T> {
        private final long periodNanos;
        private final Supplier<T> empty;
        private T value;
        private long countedAt;

        Recounted(long periodNanos, Supplier<T> empty) {
            this.periodNanos = periodNanos;
            this.empty = empty;
        }

        T get(Supplier<T> count) {
            long now = System.nanoTime();
            synchronized (this) {
                if (value != null && now - countedAt < periodNanos) {
                    return value;
                }
            }
            T v;
            try {
                v = count.get();
            } catch (IllegalStateException | RlMetaException e) { // replaced (a rebuild) or closed under us
                synchronized (this) {
                    return value != null ? value : empty.get();
                }
            }
            synchronized (this) {
                value = v;
                countedAt = now;
            }
            return v;
        }
    }

    @Override
    public long getBootstrapTimeMs() {
        double at = timeline.at("all initialized");
        return at < 0 ? -1 : Math.round(at);
    }

    @Override
    public int getBrokerId() {
        return brokerId;
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
    public long getThreadDeaths() {
        return consumer.deaths() + guard.deaths();
    }

    @Override
    public boolean[] getStopped() {
        boolean[] a = new boolean[numPartitions];
        for (int p = 0; p < numPartitions; p++) {
            a[p] = consumer.stopped(p);
        }
        return a;
    }

    @Override
    public boolean isServing() {
        return consumer.serving();
    }

    @Override
    public String getLastError() {
        String e = consumer.lastError();
        String d = guard.lastDeath();
        return e != null ? e : d != null ? d : initError;
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
