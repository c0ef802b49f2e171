package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The ops/ files without a broker: the checks PluginMonitorableTest runs on a real scrape find
 * what is wrong (a series nobody serves, a label it lacks, an alert without a runbook section), and
 * the rules file produces exactly the series ops/README.md documents. No broker: fast.
 */
class OpsSeriesTest {
    static final Path OPS = Path.of(System.getProperty("rlmeta.ops.dir", "../../ops"));

    static final Map<String, Set<String>> SERVED = Map.of(
            "rlmeta_rlmm_serving", Set.of(),
            "rlmeta_rlmm_metadata_records_total", Set.of("outcome"),
            "rlmeta_rlmm_metadata_partition_lag_records", Set.of("topic", "partition"));

    @Test
    void theChecksFindSeriesLabelsAndRunbookSectionsThatAreMissing() throws Exception {
        String dashboard = "{\"panels\":[{\"title\":\"row\",\"panels\":[{\"title\":\"nested\",\"targets\":["
                + "{\"expr\":\"sum by (instance) (rlmeta_rlmm_serving)\"},"
                + "{\"expr\":\"rate(rlmeta_rlmm_records_total[5m])\"}]}]},"
                + "{\"title\":\"labels\",\"targets\":[{\"expr\":\"rlmeta_rlmm_metadata_records_total{outcom=\\\"applied\\\"}\"},"
                + "{\"expr\":\"max by (partition) (rlmeta_rlmm_serving)\"},{\"expr\":\"up\"}]}]}";
        List<String> problems = OpsSeries.problems(SERVED, OpsSeries.dashboardExpressions(dashboard));
        assertEquals(4, problems.size(), problems.toString());
        String all = String.join("\n", problems);
        for (String expected : List.of("panel \"nested\" target 1: rlmeta_rlmm_records_total is not served",
                "panel \"labels\" target 0: rlmeta_rlmm_metadata_records_total has no label outcom",
                "panel \"labels\" target 1: groups by partition", "panel \"labels\" target 2: names no rlmeta series")) {
            assertTrue(all.contains(expected), "no problem \"" + expected + "\" in " + problems);
        }

        String alerts = "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: rlmeta_rlmm_serving == 0\n"
                + "      - alert: B\n        expr: max by (topic, partition) (rlmeta_rlmm_metadata_partition_lag_records) > 5\n";
        Map<String, String> exprs = OpsSeries.alertExpressions(alerts);
        assertEquals(Set.of("A", "B"), exprs.keySet());
        assertEquals(List.of(), OpsSeries.problems(SERVED, exprs));
        assertEquals(List.of("alert B has no \"### B\" section in the runbook"),
                OpsSeries.alertsWithoutRunbook(exprs.keySet(), "# x\n### A\ntext\n#### B\n"));
    }

    @Test
    void theRulesProduceTheDocumentedSeriesAndTheFilesUseOnlyThem() throws Exception {
        Map<String, Set<String>> documented = OpsSeries.documented(OPS.resolve("README.md"));
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(OPS.resolve("prometheus/jmx-exporter-rlmeta.yml").toFile());
        Set<String> names = new TreeSet<>();
        for (JsonNode r : rules.path("rules")) {
            String name = r.path("name").asText();
            names.add(name);
            Set<String> labels = new TreeSet<>();
            r.path("labels").fieldNames().forEachRemaining(labels::add);
            assertEquals(documented.get(name), labels, "labels of " + name);
            assertTrue(!r.path("help").asText().isBlank(), name + " has no help");
            assertEquals(name.endsWith("_total"), "COUNTER".equals(r.path("type").asText()), name + " type");
        }
        assertEquals(documented.keySet(), names, "the rules' series vs ops/README.md's table");
        // against the documented series (PluginMonitorableTest checks them against a real scrape)
        Map<String, String> panels = OpsSeries.dashboardExpressions(Files.readString(OPS.resolve("grafana/rlmeta-dashboard.json")));
        Map<String, String> alerts = OpsSeries.alertExpressions(Files.readString(OPS.resolve("prometheus/rlmeta-alerts.yml")));
        assertEquals(List.of(), OpsSeries.problems(documented, panels), "dashboard");
        assertEquals(List.of(), OpsSeries.problems(documented, alerts), "alerts");
        assertEquals(List.of(), OpsSeries.alertsWithoutRunbook(alerts.keySet(), Files.readString(OPS.resolve("README.md"))));
        System.out.printf("[ops] %d series documented and produced by the rules; %d panel and %d alert expressions use only "
                + "them; every alert has a runbook section%n", names.size(), panels.size(), alerts.size());
    }
}
