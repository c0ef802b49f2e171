package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

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
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PluginMonitorableTest {
    static final String CLASS = "MonitorableRlmetaRemoteLogMetadataManager";

    static final Duration WAIT = Duration.ofSeconds(120);
    static final Path OPS = Path.of(System.getProperty("rlmeta.ops.dir", "../../ops"));

    private KafkaCluster c;
    private Admin admin;
    private JMXConnector jmx;
    private MBeanServerConnection mbs;
    private int exporterPort;

    /**
     * One node for both tests, with the JMX exporter agent (the real one, from Maven Central,
     * copied by tests/cluster/pom.xml) on the project's rules file.
     */
    @BeforeAll
    void start() throws Exception {
        Path agent = Path.of(System.getProperty("rlmeta.jmx.exporter.jar", ""));
        assertTrue(Files.isRegularFile(agent), "no JMX exporter agent jar at '" + agent + "'");
        Path rules = OPS.resolve("prometheus/jmx-exporter-rlmeta.yml").toAbsolutePath();
        assertTrue(Files.isRegularFile(rules), "no rules file " + rules);
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            exporterPort = s.getLocalPort();
        }
        c = KafkaCluster.single("monitorable", Rlmm.PLUGIN_LIBS,
                Map.of("remote.log.metadata.manager.class.name", "dev.rlmeta.kafka." + CLASS), KafkaVersion.current());
        c.jvmOptions(1, List.of("-javaagent:" + agent.toAbsolutePath() + "=127.0.0.1:" + exporterPort + ":" + rules));
        c.start();
        admin = c.admin();
        VirtualMachine vm = VirtualMachine.attach(Long.toString(c.pid(1)));
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        jmx = JMXConnectorFactory.connect(new JMXServiceURL(address));
        mbs = jmx.getMBeanServerConnection();
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (jmx != null) {
                jmx.close();
            }
            if (admin != null) {
                admin.close();
            }
        } finally {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    @Order(1)
    void kafkaMetricsCarryEveryAttributeOfTheMBean() throws Exception {
        String id = Tiered.create(admin, "mon-t", 1, 1, Tiered.topicConfigs()).toString();
        int mp = RlMeta.metadataPartition(id, 0, 3);
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
        assertEquals(mbs.getAttribute(ours, "StoreBytes"), kafka.get("store-bytes"), "store-bytes");
        assertTrue((Long) kafka.get("store-bytes") > 0, "the native store holds mon-t-0");
        System.out.printf("[monitorable] Kafka 4.4.0, the jar in libs/, class.name %s: %d Kafka metrics under "
                + "kafka.server:type=plugins,config=remote.log.metadata.manager.class.name,class=%s, named as the "
                + "MBean's %d attributes %s, with its values: %s; e.g. %s%n", CLASS, kafka.size(), CLASS, names.size(),
                names, kafka, objectNames.iterator().next());
        // the same values as MBeans in Kafka's shape, numbers only: one per metadata partition, one per outcome
        Set<ObjectName> tagged = new TreeSet<>(mbs.queryNames(new ObjectName("dev.rlmeta:type=RemoteLogMetadataManager,*"), null));
        tagged.remove(ours);
        long[] segments = (long[]) mbs.getAttribute(ours, "Segments");
        int partitionBeans = 0;
        int outcomeBeans = 0;
        for (ObjectName n : tagged) {
            for (MBeanAttributeInfo a : mbs.getMBeanInfo(n).getAttributes()) {
                assertTrue(mbs.getAttribute(n, a.getName()) instanceof Number, n + " " + a.getName() + " is not a number");
            }
            if (n.getKeyProperty("partition") != null) {
                partitionBeans++;
                int p = Integer.parseInt(n.getKeyProperty("partition"));
                assertEquals("__remote_log_metadata", n.getKeyProperty("topic"), n.toString());
                assertEquals(applied[p], mbs.getAttribute(n, "AppliedOffsets"), n + " AppliedOffsets");
                assertEquals(levels[p], mbs.getAttribute(n, "WriteLevels"), n + " WriteLevels");
                assertEquals(init[p] ? 1L : 0L, mbs.getAttribute(n, "Initialized"), n + " Initialized");
                assertEquals(segments[p], mbs.getAttribute(n, "Segments"), n + " Segments");
                assertEquals(kafka.get("lag{metadata-partition=" + p + "}"), mbs.getAttribute(n, "Lag"), n + " Lag");
            } else {
                outcomeBeans++;
                String o = n.getKeyProperty("outcome");
                assertEquals(kafka.get("records-by-outcome{outcome=" + o + "}"), mbs.getAttribute(n, "RecordsByOutcome"),
                        n + " RecordsByOutcome");
            }
        }
        assertEquals(applied.length, partitionBeans, "one MBean per metadata partition: " + tagged);
        assertEquals(byOutcome.size(), outcomeBeans, "one MBean per outcome: " + tagged);
        assertEquals(1, mbs.getAttribute(ours, "BrokerId"));
        assertTrue((Long) mbs.getAttribute(ours, "BootstrapTimeMs") > 0, "bootstrap time not set");
        System.out.printf("[monitorable] and %d MBeans dev.rlmeta:type=RemoteLogMetadataManager,topic=__remote_log_metadata,"
                + "partition=P and %d ...,outcome=O, numbers only, equal to the aggregate's arrays and map%n",
                partitionBeans, outcomeBeans);
    }

    /**
     * The JMX exporter agent with ops/prometheus/jmx-exporter-rlmeta.yml on this broker: /metrics
     * over HTTP serves exactly the series ops/README.md documents, with their labels; the counters
     * and gauges move when the broker tiers segments and deletes them by retention; the dashboard's
     * panels and the alert rules name only series (and labels) the scrape served. The served
     * series are written to build/prometheus-series.txt.
     */
    @Test
    @Order(2)
    void prometheusExporterServesEveryDocumentedSeries() throws Exception {
        Scrape s0 = awaitScrape("the plugin's series", s -> s.value("rlmeta_rlmm_serving", Map.of()) != null);
        Map<String, Set<String>> documented = OpsSeries.documented(OPS.resolve("README.md"));
        assertTrue(documented.size() >= 10, "ops/README.md documents only " + documented.keySet());
        assertEquals(documented, s0.labels(), "the series ops/README.md documents vs the series served");
        assertEquals(3, s0.count("rlmeta_rlmm_metadata_partition_applied_offset"), "one series per metadata partition");
        assertEquals(1.0, s0.value("rlmeta_rlmm_serving", Map.of()));
        assertEquals(1.0, s0.value("rlmeta_rlmm_broker", Map.of("broker_id", "1")));
        assertEquals(0.0, s0.value("rlmeta_rlmm_store_rebuilds_total", Map.of()));
        assertTrue(s0.value("rlmeta_rlmm_bootstrap_seconds", Map.of()) > 0, "bootstrap seconds " + s0.series);

        // tiering: uploads move the records counters, the applied offset and the live segments
        String topic = "prom-t";
        String id = Tiered.create(admin, topic, 1, 1, Tiered.topicConfigs()).toString();
        Map<String, String> mp = Map.of("topic", "__remote_log_metadata",
                "partition", Integer.toString(RlMeta.metadataPartition(id, 0, 3)));
        Scrape before = scrape();
        Tiered.produce(c.bootstrap(), topic, 1, 0, 240);
        Tiered.awaitTiered(c, admin, topic, 1, 3, WAIT);
        Scrape tiered = awaitScrape("3 more live segments, their records counted and applied", s ->
                s.value("rlmeta_rlmm_metadata_partition_remote_segments", mp)
                        >= before.value("rlmeta_rlmm_metadata_partition_remote_segments", mp) + 3
                        && s.sum("rlmeta_rlmm_metadata_records_total") >= before.sum("rlmeta_rlmm_metadata_records_total") + 6
                        && s.value("rlmeta_rlmm_metadata_partition_applied_offset", mp)
                        >= before.value("rlmeta_rlmm_metadata_partition_applied_offset", mp) + 6
                        // a new held partition with 3 segments: more native memory (recounted every 10 s)
                        && s.value("rlmeta_rlmm_store_native_bytes", Map.of())
                        > before.value("rlmeta_rlmm_store_native_bytes", Map.of()));
        assertEquals(1.0, tiered.value("rlmeta_rlmm_metadata_partition_initialized", mp));
        assertEquals(2.0, tiered.value("rlmeta_rlmm_metadata_partition_write_level", mp));
        assertTrue(tiered.value("rlmeta_rlmm_metadata_partition_lag_records", mp) >= 0, "lag " + tiered.series);

        // retention: remote deletions move the tombstone counter and take live segments away
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                List.of(new AlterConfigOp(new ConfigEntry("retention.bytes", "49152"), AlterConfigOp.OpType.SET))))
                .all().get(60, TimeUnit.SECONDS);
        KafkaCluster.await(topic + ": 2 remote deletions by retention", WAIT, () -> Tiered.journalCount(c, "DELETE", topic) >= 2);
        Map<String, String> tombstone = Map.of("outcome", "tombstone");
        Scrape deleted = awaitScrape("tombstones counted; live segments = uploads - deletions (the file RSM's journal)",
                s -> s.value("rlmeta_rlmm_metadata_records_total", tombstone)
                        >= tiered.value("rlmeta_rlmm_metadata_records_total", tombstone) + 2
                        && s.value("rlmeta_rlmm_metadata_partition_remote_segments", mp)
                        == Tiered.journalCount(c, "COPY", topic) - Tiered.journalCount(c, "DELETE", topic));
        assertEquals(documented, deleted.labels(), "the series served after tiering and deletion");
        assertEquals(0.0, deleted.value("rlmeta_rlmm_store_rebuilds_total", Map.of()));

        // what the exporter served, for the ops checks (and for people)
        Path out = Path.of(System.getProperty("rlmeta.build.dir", "../../build")).resolve("prometheus-series.txt");
        Files.createDirectories(out.getParent());
        StringBuilder sb = new StringBuilder();
        deleted.labels().forEach((n, l) -> sb.append(n).append(l.isEmpty() ? "" : " " + String.join(",", l)).append('\n'));
        Files.writeString(out, sb.toString());

        // the dashboard and the alerts name only what was served; every alert has a runbook section
        Map<String, String> panels = OpsSeries.dashboardExpressions(Files.readString(OPS.resolve("grafana/rlmeta-dashboard.json")));
        Map<String, String> alerts = OpsSeries.alertExpressions(Files.readString(OPS.resolve("prometheus/rlmeta-alerts.yml")));
        assertTrue(panels.size() >= 10 && alerts.size() >= 8, "panels " + panels.keySet() + ", alerts " + alerts.keySet());
        List<String> problems = new ArrayList<>(OpsSeries.problems(deleted.labels(), panels));
        problems.addAll(OpsSeries.problems(deleted.labels(), alerts));
        problems.addAll(OpsSeries.alertsWithoutRunbook(alerts.keySet(), Files.readString(OPS.resolve("README.md"))));
        assertEquals(List.of(), problems, "the dashboard and alert rules vs the series served");
        System.out.printf("[prometheus] jmx_prometheus_javaagent %s on Kafka 4.4.0 with ops/prometheus/jmx-exporter-rlmeta.yml: "
                + "%d rlmeta series (%d samples), as documented; tiering: records %.0f -> %.0f, live segments of %s %.0f -> %.0f; "
                + "retention: %d deletions, tombstones %.0f -> %.0f, live segments %.0f; %d panel and %d alert expressions "
                + "name only served series; written to %s%n", System.getProperty("rlmeta.jmx.exporter.version", "?"),
                documented.size(), deleted.series.values().stream().mapToInt(Map::size).sum(), before.sum("rlmeta_rlmm_metadata_records_total"),
                tiered.sum("rlmeta_rlmm_metadata_records_total"), mp, before.value("rlmeta_rlmm_metadata_partition_remote_segments", mp),
                tiered.value("rlmeta_rlmm_metadata_partition_remote_segments", mp), Tiered.journalCount(c, "DELETE", topic),
                tiered.value("rlmeta_rlmm_metadata_records_total", tombstone), deleted.value("rlmeta_rlmm_metadata_records_total", tombstone),
                deleted.value("rlmeta_rlmm_metadata_partition_remote_segments", mp), panels.size(), alerts.size(), out);
    }

    /** One scrape of /metrics: every rlmeta_ sample by name and labels. */
    static final class Scrape {
        private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s+(\\S+)");
        private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
        final Map<String, Map<Map<String, String>, Double>> series = new TreeMap<>();

        Scrape(String text) {
            for (String line : text.split("\n")) {
                Matcher m = SAMPLE.matcher(line);
                if (line.startsWith("#") || !m.find() || !m.group(1).startsWith("rlmeta_")) {
                    continue;
                }
                Map<String, String> labels = new TreeMap<>();
                if (m.group(2) != null) {
                    Matcher l = LABEL.matcher(m.group(2));
                    while (l.find()) {
                        labels.put(l.group(1), l.group(2));
                    }
                }
                series.computeIfAbsent(m.group(1), k -> new HashMap<>()).put(labels, Double.parseDouble(m.group(3)));
            }
        }

        /** The value of the sample with exactly these labels, or null. */
        Double value(String name, Map<String, String> labels) {
            return series.getOrDefault(name, Map.of()).get(new TreeMap<>(labels));
        }

        double sum(String name) {
            return series.getOrDefault(name, Map.of()).values().stream().mapToDouble(Double::doubleValue).sum();
        }

        int count(String name) {
            return series.getOrDefault(name, Map.of()).size();
        }

        /** Series name -> its label names (the union over its samples). */
        Map<String, Set<String>> labels() {
            Map<String, Set<String>> out = new TreeMap<>();
            series.forEach((n, samples) -> {
                Set<String> l = new TreeSet<>();
                samples.keySet().forEach(k -> l.addAll(k.keySet()));
                out.put(n, l);
            });
            return out;
        }
    }

    Scrape scrape() throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + exporterPort + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), "GET /metrics: " + r.body());
        return new Scrape(r.body());
    }

    /** Scrapes until `ok` holds; fails with the last scrape's rlmeta series after WAIT. */
    Scrape awaitScrape(String what, Predicate<Scrape> ok) {
        Scrape[] last = new Scrape[1];
        try {
            KafkaCluster.await(what, WAIT, () -> {
                try {
                    last[0] = scrape();
                    return ok.test(last[0]);
                } catch (Exception | AssertionError e) {
                    return false;
                }
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last scrape: " + (last[0] == null ? "none" : last[0].series), e);
        }
        return last[0];
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
