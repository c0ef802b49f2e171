package dev.rlmeta.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * A real KRaft Kafka cluster on 127.0.0.1 (4.4.0, or the version given): one controller and N
 * brokers, or one node in both roles ({@link #single}), each its own JVM
 * (small heap), on ports picked when the cluster starts, tiered storage on with the file RSM of
 * tests/e2e, and short task intervals. Each broker runs one of three metadata managers: stock
 * TBRLMM, or the rlmeta plugin loaded by {@code remote.log.metadata.manager.class.path} or from
 * the broker's own class path (as a jar in {@code libs/} is).
 *
 * <p>Every process started is recorded in the pid file (run.sh kills what is left of them on
 * exit) and stopped by {@link #close()} and by a shutdown hook.
 */
public final class KafkaCluster implements AutoCloseable {
    public enum Rlmm { STOCK, PLUGIN_CLASS_PATH, PLUGIN_LIBS }

    public static final String PLUGIN_CLASS = "dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager";
    public static final String STOCK_CLASS =
            "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager";
    private Duration startLimit = Duration.ofSeconds(120);
    /** the command that runs a node's java, before its options: null for the version's javaHome */
    private List<String> javaLauncher;

    private final Path work;
    private final Path remoteDir;
    private final String clusterId = randomClusterId();
    private final int controllerPort;
    private final Map<Integer, Integer> brokerPorts = new TreeMap<>();
    private final Map<Integer, Rlmm> rlmms = new TreeMap<>();
    private final Map<Integer, Process> processes = new TreeMap<>(); // node id -> process (0 = controller)
    private final Map<String, String> extraBrokerConfig = new LinkedHashMap<>();
    private final Map<Integer, List<String>> jvmOptions = new TreeMap<>();
    private final String brokerClassPath;
    private final String rsmJar;
    private final String pluginJar;
    private final int metadataReplicationFactor;
    private final KafkaVersion kafka;
    /** one node (id 1) that is both controller and broker: no separate controller JVM */
    private final boolean combined;

    public KafkaCluster(String name, int brokers, Map<Integer, Rlmm> rlmmByBroker, Map<String, String> extra)
            throws IOException {
        this(name, brokers, rlmmByBroker, extra, KafkaVersion.current(), false);
    }

    /** One KRaft node (id 1) in both roles, of the given Kafka, with `rlmm` as its metadata manager. */
    public static KafkaCluster single(String name, Rlmm rlmm, Map<String, String> extra, KafkaVersion kafka)
            throws IOException {
        return new KafkaCluster(name, 1, Map.of(1, rlmm), extra, kafka, true);
    }

    private KafkaCluster(String name, int brokers, Map<Integer, Rlmm> rlmmByBroker, Map<String, String> extra,
                         KafkaVersion kafka, boolean combined) throws IOException {
        this.kafka = kafka;
        this.combined = combined;
        this.work = Path.of(prop("rlmeta.cluster.work")).resolve(name + "-" + System.currentTimeMillis());
        this.remoteDir = work.resolve("remote");
        Files.createDirectories(remoteDir);
        this.brokerClassPath = Files.readString(kafka.classPathFile()).trim();
        this.rsmJar = prop("rlmeta.rsm.jar");
        this.pluginJar = System.getProperty("rlmeta.plugin.jar", "");
        this.controllerPort = freePort();
        for (int id = 1; id <= brokers; id++) {
            brokerPorts.put(id, freePort());
            rlmms.put(id, rlmmByBroker.getOrDefault(id, Rlmm.STOCK));
        }
        this.metadataReplicationFactor = Math.min(3, brokers);
        extraBrokerConfig.putAll(extra);
        Runtime.getRuntime().addShutdownHook(new Thread(this::killAll, "kafka-cluster-killer"));
    }

    private static String prop(String name) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            throw new IllegalStateException("system property " + name + " is not set (run through tests/cluster/run.sh)");
        }
        return v;
    }

    private static String randomClusterId() {
        // Kafka's own never starts with '-', which kafka-storage's argument parser takes for an option
        return org.apache.kafka.common.Uuid.randomUuid().toString();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    /**
     * Runs every node's JVM by `launcher` (e.g. {@code qemu-aarch64-static -L ROOT ROOT/.../bin/java}
     * for an aarch64 JVM under emulation) instead of the version's java, waiting up to `startLimit`
     * for a start. Before {@link #start()}.
     */
    public KafkaCluster launcher(List<String> launcher, Duration startLimit) {
        this.javaLauncher = List.copyOf(launcher);
        this.startLimit = startLimit;
        return this;
    }

    /** Extra JVM options of a broker from its next start on (e.g. test hooks); an empty list removes them. */
    public void jvmOptions(int id, List<String> options) {
        jvmOptions.put(id, List.copyOf(options));
    }

    public Path work() { return work; }
    public Path remoteDir() { return remoteDir; }
    public Path dataDir(int id) { return work.resolve("node-" + id).resolve("data"); }
    public Path dumpFile(int id) { return work.resolve("node-" + id).resolve("rlmm-dump.json"); }
    public Path logFile(int id) { return work.resolve("node-" + id).resolve("server.log"); }
    public List<Integer> brokerIds() { return new ArrayList<>(brokerPorts.keySet()); }
    public Rlmm rlmm(int id) { return rlmms.get(id); }
    public KafkaVersion kafka() { return kafka; }

    public String bootstrap() {
        return brokerPorts.values().stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    public String bootstrap(int id) { return "127.0.0.1:" + brokerPorts.get(id); }

    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
        return Admin.create(p);
    }

    // ------------------------------------------------------------------ configs

    private Map<String, String> controllerConfig() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("process.roles", "controller");
        c.put("node.id", "0");
        putQuorum(c);
        c.put("listeners", "CONTROLLER://127.0.0.1:" + controllerPort);
        c.put("advertised.listeners", "CONTROLLER://127.0.0.1:" + controllerPort);
        c.put("controller.listener.names", "CONTROLLER");
        c.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        c.put("log.dirs", dataDir(0).toString());
        // the controller validates topic configs: remote.storage.enable needs this on
        c.put("remote.log.storage.system.enable", "true");
        return c;
    }

    /**
     * The quorum: KIP-853's bootstrap servers on 3.9+ (the controller formatted --standalone), a
     * static voter set before 3.9 and for a combined node (node 1 is the only voter).
     */
    private void putQuorum(Map<String, String> c) {
        if (combined) {
            c.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        } else if (kafka.dynamicQuorum()) {
            c.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        } else {
            c.put("controller.quorum.voters", "0@127.0.0.1:" + controllerPort);
        }
    }

    /**
     * A small test node's threads, internal topics (`replicationFactor` replicas, one partition) and
     * quick background tasks (retention checks, deletions), shared by every harness that starts a
     * Kafka JVM.
     */
    static void putSmallNodeDefaults(Map<String, String> c, int replicationFactor) {
        String rf = Integer.toString(replicationFactor);
        c.put("num.network.threads", "2");
        c.put("num.io.threads", "2");
        c.put("background.threads", "2");
        c.put("offsets.topic.replication.factor", rf);
        c.put("offsets.topic.num.partitions", "1");
        c.put("transaction.state.log.replication.factor", rf);
        c.put("transaction.state.log.min.isr", "1");
        c.put("share.coordinator.state.topic.replication.factor", rf);
        c.put("share.coordinator.state.topic.min.isr", "1");
        c.put("group.initial.rebalance.delay.ms", "0");
        c.put("auto.create.topics.enable", "false");
        c.put("log.retention.check.interval.ms", "1000");
        c.put("log.initial.task.delay.ms", "500");
        c.put("file.delete.delay.ms", "1000");
    }

    private Map<String, String> brokerConfig(int id) {
        int port = brokerPorts.get(id);
        Map<String, String> c = new LinkedHashMap<>();
        c.put("process.roles", combined ? "broker,controller" : "broker");
        c.put("node.id", Integer.toString(id));
        putQuorum(c);
        c.put("controller.listener.names", "CONTROLLER");
        c.put("listeners", "PLAINTEXT://127.0.0.1:" + port
                + (combined ? ",CONTROLLER://127.0.0.1:" + controllerPort : ""));
        c.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        c.put("inter.broker.listener.name", "PLAINTEXT");
        c.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        c.put("log.dirs", dataDir(id).toString());
        putSmallNodeDefaults(c, metadataReplicationFactor);
        c.put("log.cleaner.backoff.ms", "1000");
        c.put("log.cleaner.threads", "1");
        c.put("log.cleaner.dedupe.buffer.size", "2097152");
        c.put("replica.lag.time.max.ms", "10000");
        // tiered storage, file RSM from tests/e2e
        c.put("remote.log.storage.system.enable", "true");
        c.put("remote.log.storage.manager.class.name", "dev.rlmeta.e2e.FileRemoteStorageManager");
        c.put("remote.log.storage.manager.class.path", rsmJar);
        c.put("rsm.config.dir", remoteDir.toString());
        c.put("remote.log.manager.task.interval.ms", "1000");
        c.put("remote.log.manager.copier.thread.pool.size", "2");
        c.put("remote.log.manager.expiration.thread.pool.size", "2");
        c.put("remote.log.manager.thread.pool.size", "2");
        c.put("remote.log.reader.threads", "2");
        c.put("remote.log.metadata.manager.listener.name", "PLAINTEXT");
        c.put("rlmm.config.remote.log.metadata.topic.num.partitions", "3");
        c.put("rlmm.config.remote.log.metadata.topic.replication.factor", Integer.toString(metadataReplicationFactor));
        c.put("rlmm.config.remote.log.metadata.topic.min.isr", Integer.toString(Math.min(2, metadataReplicationFactor)));
        c.put("rlmm.config.remote.log.metadata.consume.wait.ms", "30000");
        switch (rlmms.get(id)) {
            case STOCK -> c.put("remote.log.metadata.manager.class.name", STOCK_CLASS);
            case PLUGIN_CLASS_PATH -> {
                c.put("remote.log.metadata.manager.class.name", PLUGIN_CLASS);
                c.put("remote.log.metadata.manager.class.path", requirePluginJar());
            }
            case PLUGIN_LIBS -> c.put("remote.log.metadata.manager.class.name", PLUGIN_CLASS);
        }
        if (rlmms.get(id) != Rlmm.STOCK) {
            c.put("rlmm.config.rlmeta.dump.path", dumpFile(id).toString());
        }
        c.putAll(extraBrokerConfig);
        return c;
    }

    private String requirePluginJar() {
        if (pluginJar.isBlank() || !Files.isRegularFile(Path.of(pluginJar))) {
            throw new IllegalStateException("the plugin jar is missing: rlmeta.plugin.jar=" + pluginJar);
        }
        return pluginJar;
    }

    private Path writeConfig(int id, Map<String, String> config) throws IOException {
        return writeNodeFiles(work.resolve("node-" + id), config, logFile(id));
    }

    /**
     * Writes a node's server.properties (from `config`) and its log4j2.properties (the broker's own
     * log to `logFile`, rlmeta and RemoteLogManager at INFO, remote-storage deletions at DEBUG) into
     * `dir`; returns the server.properties path. Shared by every harness that starts a Kafka JVM.
     */
    static Path writeNodeFiles(Path dir, Map<String, String> config, Path logFile) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve("server.properties");
        StringBuilder sb = new StringBuilder();
        config.forEach((k, v) -> sb.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        Files.writeString(file, sb.toString());
        Files.writeString(dir.resolve("log4j2.properties"), String.join("\n",
                "status = warn",
                "appender.file.type = File",
                "appender.file.name = FILE",
                "appender.file.fileName = " + logFile,
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = [%d] %p %m (%c)%n",
                "rootLogger.level = WARN",
                "rootLogger.appenderRef.file.ref = FILE",
                "logger.raft.name = kafka.server.KafkaRaftServer",
                "logger.raft.level = INFO",
                "logger.rlmeta.name = dev.rlmeta",
                "logger.rlmeta.level = INFO",
                "logger.rlm.name = org.apache.kafka.server.log.remote",
                "logger.rlm.level = INFO",
                // "Deleting/Deleted remote log segment" and the retriable errors of RLM tasks are DEBUG
                "logger.rlmdebug.name = org.apache.kafka.server.log.remote.storage",
                "logger.rlmdebug.level = DEBUG",
                ""));
        return file;
    }

    // ------------------------------------------------------------------ processes

    private List<String> javaCommand(int id, String classPath, String... args) {
        List<String> cmd = new ArrayList<>();
        if (javaLauncher != null) {
            cmd.addAll(javaLauncher);
        } else {
            cmd.add(kafka.javaHome().resolve("bin").resolve("java").toString());
        }
        cmd.add("-Xms64m");
        cmd.add("-Xmx" + (id == 0 ? "256m" : "448m"));
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-XX:CICompilerCount=1");
        cmd.add("-Dlog4j2.configurationFile=" + work.resolve("node-" + id).resolve("log4j2.properties"));
        cmd.add("-Dlog4j2.shutdownHookEnabled=false");
        cmd.add("-Drlmeta.extract.dir=" + work.resolve("node-" + id).resolve("native"));
        cmd.addAll(jvmOptions.getOrDefault(id, List.of()));
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.addAll(List.of(args));
        return cmd;
    }

    private String classPathFor(int id) {
        if (id != 0 && rlmms.get(id) == Rlmm.PLUGIN_LIBS) {
            return requirePluginJar() + java.io.File.pathSeparator + brokerClassPath;
        }
        return brokerClassPath;
    }

    private Process launch(int id, List<String> cmd, String outName) throws IOException {
        Path out = work.resolve("node-" + id).resolve(outName);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile())).start();
        Files.writeString(Path.of(prop("rlmeta.cluster.pids")), p.pid() + "\n",
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return p;
    }

    /** Formats every node, starts the controller and every broker, and waits until all are started. */
    public KafkaCluster start() throws Exception {
        return start(brokerIds());
    }

    /** Formats every node, starts the controller and the given brokers (the others: restartBroker). */
    public KafkaCluster start(List<Integer> initial) throws Exception {
        long t0 = System.nanoTime();
        List<Process> formats = new ArrayList<>();
        boolean dynamic = !combined && kafka.dynamicQuorum();
        if (!combined) {
            Path c0 = writeConfig(0, controllerConfig());
            formats.add(launch(0, javaCommand(0, brokerClassPath, formatArgs(dynamic ? "--standalone" : null, c0)),
                    "format.out"));
        }
        for (int id : brokerIds()) {
            Path c = writeConfig(id, brokerConfig(id));
            formats.add(launch(id, javaCommand(id, brokerClassPath,
                    formatArgs(dynamic ? "--no-initial-controllers" : null, c)), "format.out"));
        }
        for (Process f : formats) {
            if (!f.waitFor(startLimit.toSeconds(), TimeUnit.SECONDS) || f.exitValue() != 0) {
                f.destroyForcibly();
                throw new IllegalStateException("kafka-storage format failed; see " + work + "/node-*/format.out");
            }
        }
        if (!combined) {
            startNode(0);
        }
        for (int id : initial) {
            startNode(id);
        }
        for (int id : initial) {
            awaitStarted(id);
        }
        log("cluster %s of Kafka %s started: %s 127.0.0.1:%d, brokers %s (%s) in %d s", clusterId, kafka,
                combined ? "combined node's controller listener" : "controller", controllerPort,
                bootstrap(), rlmms, (System.nanoTime() - t0) / 1_000_000_000L);
        return this;
    }

    /** kafka-storage format of a node; `quorumFlag` (KIP-853, 3.9+) or none for a static quorum. */
    private String[] formatArgs(String quorumFlag, Path config) {
        List<String> a = new ArrayList<>(List.of("kafka.tools.StorageTool", "format"));
        if (quorumFlag != null) {
            a.add(quorumFlag);
        }
        a.addAll(List.of("--cluster-id", clusterId, "--config", config.toString()));
        return a.toArray(new String[0]);
    }

    private void startNode(int id) throws IOException {
        Path config = id == 0 ? writeConfig(0, controllerConfig()) : writeConfig(id, brokerConfig(id));
        processes.put(id, launch(id, javaCommand(id, classPathFor(id), "kafka.Kafka", config.toString()), "stdout.log"));
    }

    private long startedLines(int id) {
        try {
            if (!Files.exists(logFile(id))) {
                return 0;
            }
            try (Stream<String> lines = Files.lines(logFile(id), StandardCharsets.UTF_8)) {
                return lines.filter(l -> l.contains("Kafka Server started")).count();
            }
        } catch (IOException | UncheckedIOException e) {
            return 0;
        }
    }

    private void awaitStarted(int id) {
        awaitStarted(id, 1);
    }

    private void awaitStarted(int id, long times) {
        await("node " + id + " started", startLimit, () -> {
            Process p = processes.get(id);
            if (p == null || !p.isAlive()) {
                throw new IllegalStateException("node " + id + " exited during startup; see " + logFile(id)
                        + " and " + work.resolve("node-" + id).resolve("stdout.log"));
            }
            return startedLines(id) >= times;
        });
    }

    /** Starts a stopped broker again (with `rlmm` as its metadata manager) and waits until it is started. */
    public void restartBroker(int id, Rlmm rlmm) throws IOException {
        long before = startedLines(id);
        rlmms.put(id, rlmm);
        startNode(id);
        awaitStarted(id, before + 1);
        log("broker %d started again (%s)", id, rlmm);
    }

    /** Starts stopped brokers again, all at once (with `rlmm` as their metadata manager), and waits until each is started. */
    public void restartBrokers(List<Integer> ids, Rlmm rlmm) throws IOException {
        Map<Integer, Long> before = new TreeMap<>();
        for (int id : ids) {
            before.put(id, startedLines(id));
            rlmms.put(id, rlmm);
            startNode(id);
        }
        for (int id : ids) {
            awaitStarted(id, before.get(id) + 1);
        }
        log("brokers %s started again (%s)", ids, rlmm);
    }

    public void restartBroker(int id) throws IOException {
        restartBroker(id, rlmms.get(id));
    }

    /** SIGTERM, and waits for a clean stop (SIGKILL after 60 s, or the start limit under a {@link #launcher}). Returns true if it stopped cleanly. */
    public boolean stopBroker(int id) throws InterruptedException {
        Process p = processes.remove(id);
        if (p == null) {
            return true;
        }
        p.destroy();
        if (p.waitFor(javaLauncher == null ? 60 : Math.max(60, startLimit.toSeconds()), TimeUnit.SECONDS)) {
            return true;
        }
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        return false;
    }

    /** kill -9. */
    public void killBroker(int id) throws InterruptedException {
        Process p = processes.remove(id);
        if (p != null) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The operating-system process id of a node (0 = controller) as it runs now. */
    public long pid(int id) {
        Process p = processes.get(id);
        if (p == null) {
            throw new IllegalStateException("node " + id + " is not running");
        }
        return p.pid();
    }

    public boolean isAlive(int id) {
        Process p = processes.get(id);
        return p != null && p.isAlive();
    }

    private void killAll() {
        processes.values().forEach(Process::destroyForcibly);
    }

    @Override
    public void close() throws InterruptedException {
        for (int id : new ArrayList<>(processes.keySet())) {
            if (id != 0) {
                stopBroker(id);
            }
        }
        Process c = processes.remove(0);
        if (c != null) {
            c.destroy();
            if (!c.waitFor(30, TimeUnit.SECONDS)) {
                c.destroyForcibly();
            }
        }
    }

    // ------------------------------------------------------------------ helpers for tests

    public static void await(String what, Duration limit, BooleanSupplier condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + limit.toSeconds() + " s waiting for " + what);
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what);
            }
        }
    }

    /** The lines of the RSM's journal ("COPY tip segId start end bytes" / "DELETE tip segId start end"). */
    public List<String> journal() {
        Path j = remoteDir.resolve("journal.txt");
        try {
            return Files.exists(j) ? Files.readAllLines(j) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lines of a broker's log that contain `text`. */
    public List<String> logLines(int id, String text) {
        try (Stream<String> lines = Files.lines(logFile(id), StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.contains(text)).collect(Collectors.toList());
        } catch (IOException | UncheckedIOException e) {
            return List.of();
        }
    }

    public static void log(String fmt, Object... args) {
        System.out.printf("[cluster] " + fmt + "%n", args);
        System.out.flush();
    }
}
