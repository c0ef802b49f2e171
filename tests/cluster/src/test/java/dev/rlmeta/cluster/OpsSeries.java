package dev.rlmeta.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The operator files under ops/ against the Prometheus series a scrape served: the series the
 * runbook documents (ops/README.md's table), the PromQL of the Grafana dashboard's panels and of
 * the alert rules. Finds problems (an expression naming a series or a label nobody serves, an alert
 * without a runbook section); decides nothing about the plugin. Used by PluginMonitorableTest on a
 * real broker's scrape, and by OpsSeriesTest on files that must fail.
 */
final class OpsSeries {
    private OpsSeries() {}

    /** Series name -> label names, as served by a scrape (only rlmeta_ series) or documented. */
    static final Pattern SERIES = Pattern.compile("\\brlmeta_[a-z0-9_]+\\b");
    /** Labels Prometheus adds to every scraped series. */
    static final Set<String> TARGET_LABELS = Set.of("instance", "job");

    private static final Pattern DOC_ROW = Pattern.compile("^\\| `(rlmeta_[a-z0-9_]+)` \\| ([^|]*)\\|");
    private static final Pattern LABEL_NAME = Pattern.compile("`([a-z_]+)`");
    private static final Pattern MATCHERS = Pattern.compile("(rlmeta_[a-z0-9_]+)\\s*\\{([^}]*)\\}");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!=|!~|=)");
    private static final Pattern GROUPING = Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");
    private static final Pattern HEADING = Pattern.compile("^### (\\w+)\\s*$", Pattern.MULTILINE);

    /** The series documented in the runbook's table: | `name` | `label`, `label` (or -) | ... |. */
    static Map<String, Set<String>> documented(Path readme) throws IOException {
        Map<String, Set<String>> out = new TreeMap<>();
        for (String line : Files.readAllLines(readme)) {
            Matcher m = DOC_ROW.matcher(line);
            if (m.find()) {
                Set<String> labels = new TreeSet<>();
                Matcher l = LABEL_NAME.matcher(m.group(2));
                while (l.find()) {
                    labels.add(l.group(1));
                }
                out.put(m.group(1), labels);
            }
        }
        return out;
    }

    /** Every PromQL expression of the dashboard's panels (rows' panels too) and templating queries, by where. */
    static Map<String, String> dashboardExpressions(String json) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        JsonNode root = new ObjectMapper().readTree(json);
        List<JsonNode> panels = new ArrayList<>();
        root.path("panels").forEach(panels::add);
        for (int i = 0; i < panels.size(); i++) {
            JsonNode p = panels.get(i);
            p.path("panels").forEach(panels::add);
            int t = 0;
            for (JsonNode target : p.path("targets")) {
                out.put("panel \"" + p.path("title").asText() + "\" target " + t++, target.path("expr").asText());
            }
        }
        for (JsonNode v : root.path("templating").path("list")) {
            if ("query".equals(v.path("type").asText())) {
                JsonNode q = v.path("query");
                out.put("variable " + v.path("name").asText(), q.isObject() ? q.path("query").asText() : q.asText());
            }
        }
        return out;
    }

    /** Every alert's expression, by alert name (Prometheus rule file: groups[].rules[].alert/expr). */
    static Map<String, String> alertExpressions(String yaml) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(yaml);
        for (JsonNode g : root.path("groups")) {
            for (JsonNode r : g.path("rules")) {
                out.put(r.has("alert") ? r.path("alert").asText() : "record " + r.path("record").asText(),
                        r.path("expr").asText());
            }
        }
        return out;
    }

    /**
     * What is wrong with the expressions against the served series: an empty or series-less
     * expression, a series not served, a label matcher or grouping label the series named do not
     * carry. Each problem names where it is.
     */
    static List<String> problems(Map<String, Set<String>> served, Map<String, String> expressions) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : expressions.entrySet()) {
            String where = e.getKey();
            String expr = e.getValue();
            if (expr == null || expr.isBlank()) {
                out.add(where + ": no expression");
                continue;
            }
            Set<String> named = new TreeSet<>();
            Matcher s = SERIES.matcher(expr);
            while (s.find()) {
                named.add(s.group());
            }
            if (named.isEmpty()) {
                out.add(where + ": names no rlmeta series: " + expr);
            }
            Set<String> labels = new TreeSet<>(TARGET_LABELS);
            for (String n : named) {
                if (!served.containsKey(n)) {
                    out.add(where + ": " + n + " is not served (" + expr + ")");
                } else {
                    labels.addAll(served.get(n));
                }
            }
            Matcher m = MATCHERS.matcher(expr);
            while (m.find()) {
                Set<String> has = served.get(m.group(1));
                Matcher l = MATCHER.matcher(m.group(2));
                while (l.find()) {
                    if (has != null && !has.contains(l.group(1)) && !TARGET_LABELS.contains(l.group(1))) {
                        out.add(where + ": " + m.group(1) + " has no label " + l.group(1) + " (" + expr + ")");
                    }
                }
            }
            Matcher g = GROUPING.matcher(expr);
            while (g.find()) {
                for (String label : g.group(2).split(",")) {
                    String name = label.trim();
                    if (!name.isEmpty() && !labels.contains(name)) {
                        out.add(where + ": groups by " + name + ", a label of none of " + named + " (" + expr + ")");
                    }
                }
            }
        }
        return out;
    }

    /** Alerts without a "### AlertName" section in the runbook. */
    static List<String> alertsWithoutRunbook(Set<String> alerts, String runbook) {
        Set<String> sections = new TreeSet<>();
        Matcher h = HEADING.matcher(runbook);
        while (h.find()) {
            sections.add(h.group(1));
        }
        List<String> out = new ArrayList<>();
        for (String a : alerts) {
            if (!a.startsWith("record ") && !sections.contains(a)) {
                out.add("alert " + a + " has no \"### " + a + "\" section in the runbook");
            }
        }
        return out;
    }
}
