package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;

import com.sun.tools.attach.VirtualMachine;

import dev.rlmeta.RlMeta;
import dev.rlmeta.cluster.KafkaCluster.Rlmm;

/**
 * The plugin's metrics through Kafka's own metrics (KIP-877) on a real Kafka 4.4.0 node: the jar in
 * libs/ with remote.log.metadata.manager.class.name = MonitorableRlmetaRemoteLogMetadataManager, the
 * path on which Kafka hands a RemoteLogMetadataManager PluginMetrics (RemoteLogManager.configAndWrapRlmmPlugin
 * calls Plugin.wrapInstance on the instance it made; through a class path that instance is
 * ClassLoaderAwareRemoteLogMetadataManager, not Monitorable). Read over JMX from the broker's
 * process: one Kafka metric per value of every attribute of the plugin's MBean (the one table),
 * with the MBean's values.
 */
class PluginMonitorableTest {
    static final String CLASS = "MonitorableRlmetaRemoteLogMetadataManager";

    @Test
    void kafkaMetricsCarryEveryAttributeOfTheMBean() throws Exception {
        try (KafkaCluster c = KafkaCluster.single("monitorable", Rlmm.PLUGIN_LIBS,
                Map.of("remote.log.metadata.manager.class.name", "dev.rlmeta.kafka." + CLASS), KafkaVersion.current())
                .start(); Admin admin = c.admin()) {
            String id = Tiered.create(admin, "mon-t", 1, 1, Tiered.topicConfigs()).toString();
            int mp = RlMeta.metadataPartition(id, 0, 3);
            VirtualMachine vm = VirtualMachine.attach(Long.toString(c.pid(1)));
            String address;
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
            try (JMXConnector jmx = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
                MBeanServerConnection mbs = jmx.getMBeanServerConnection();
                ObjectName ours = new ObjectName("dev.rlmeta:type=RemoteLogMetadataManager");
                ObjectName pattern = new ObjectName("kafka.server:type=plugins,class=" + CLASS + ",*");
                KafkaCluster.await("metadata partition " + mp + " initialized, in the MBean and in Kafka's metrics",
                        Duration.ofSeconds(60), () -> {
                            try {
                                return ((boolean[]) mbs.getAttribute(ours, "Initialized"))[mp]
                                        && Long.valueOf(1).equals(kafkaValue(mbs, pattern, "initialized",
                                                Map.of("metadata-partition", Integer.toString(mp))));
                            } catch (Exception e) {
                                return false;
                            }
                        });
                // every Kafka metric of the plugin, by name and tags
                Map<String, Object> kafka = new TreeMap<>();
                Set<String> names = new TreeSet<>();
                Set<String> objectNames = new TreeSet<>(); // as Kafka's JmxReporter wrote them (key order kept)
                for (ObjectName n : mbs.queryNames(pattern, null)) {
                    objectNames.add(n.toString());
                    assertEquals("remote.log.metadata.manager.class.name", n.getKeyProperty("config"), n.toString());
                    String tag = n.getKeyProperty("metadata-partition") != null ? "metadata-partition=" + n.getKeyProperty("metadata-partition")
                            : n.getKeyProperty("outcome") != null ? "outcome=" + n.getKeyProperty("outcome") : "";
                    for (MBeanAttributeInfo a : mbs.getMBeanInfo(n).getAttributes()) {
                        names.add(a.getName());
                        kafka.put(a.getName() + (tag.isEmpty() ? "" : "{" + tag + "}"), mbs.getAttribute(n, a.getName()));
                    }
                }
                assertFalse(kafka.isEmpty(), "no Kafka metric of " + CLASS + " under " + pattern);
                // one table: the names are the MBean's attributes, kebab-cased
                Set<String> attributes = new TreeSet<>();
                for (MBeanAttributeInfo a : mbs.getMBeanInfo(ours).getAttributes()) {
                    attributes.add(a.getName().replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT));
                }
                assertEquals(attributes, names, "Kafka metric names vs the MBean's attributes");
                // the same values (quiet: nothing is written meanwhile)
                TabularData byOutcome = (TabularData) mbs.getAttribute(ours, "RecordsByOutcome");
                for (Object row : byOutcome.values()) {
                    CompositeData cd = (CompositeData) row;
                    assertEquals(cd.get("value"), kafka.get("records-by-outcome{outcome=" + cd.get("key") + "}"),
                            "records-by-outcome " + cd.get("key"));
                }
                assertTrue((Long) kafka.get("records-by-outcome{outcome=level-2}") >= 1, "no level record counted: " + kafka);
                long[] applied = (long[]) mbs.getAttribute(ours, "AppliedOffsets");
                int[] levels = (int[]) mbs.getAttribute(ours, "WriteLevels");
                boolean[] init = (boolean[]) mbs.getAttribute(ours, "Initialized");
                for (int p = 0; p < applied.length; p++) {
                    assertEquals(applied[p], kafka.get("applied-offsets{metadata-partition=" + p + "}"), "applied-offsets " + p);
                    assertEquals(levels[p], kafka.get("write-levels{metadata-partition=" + p + "}"), "write-levels " + p);
                    assertEquals(init[p] ? 1L : 0L, kafka.get("initialized{metadata-partition=" + p + "}"), "initialized " + p);
                }
                assertEquals(2, kafka.get("write-levels{metadata-partition=" + mp + "}"));
                assertEquals(1L, kafka.get("serving"));
                assertEquals(0L, kafka.get("rebuilds"));
                assertEquals(0L, kafka.get("consumer-restarts"));
                System.out.printf("[monitorable] Kafka 4.4.0, the jar in libs/, class.name %s: %d Kafka metrics under "
                        + "kafka.server:type=plugins,config=remote.log.metadata.manager.class.name,class=%s, named as the "
                        + "MBean's %d attributes %s, with its values: %s; e.g. %s%n", CLASS, kafka.size(), CLASS, names.size(),
                        names, kafka, objectNames.iterator().next());
            }
        }
    }

    /** The value of a Kafka metric of the plugin with the given tags, or null while it does not exist. */
    static Object kafkaValue(MBeanServerConnection mbs, ObjectName pattern, String name, Map<String, String> tags)
            throws Exception {
        for (ObjectName n : mbs.queryNames(pattern, null)) {
            if (tags.entrySet().stream().allMatch(t -> t.getValue().equals(n.getKeyProperty(t.getKey())))
                    && List.of(mbs.getMBeanInfo(n).getAttributes()).stream().anyMatch(a -> a.getName().equals(name))) {
                return mbs.getAttribute(n, name);
            }
        }
        return null;
    }
}
