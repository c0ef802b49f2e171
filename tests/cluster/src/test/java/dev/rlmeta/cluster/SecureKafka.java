package dev.rlmeta.cluster;

import java.io.IOException;
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
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;

/**
 * A secured single-node KRaft Kafka 4.4.0 (broker and controller in one JVM) on 127.0.0.1, for the
 * plugin under least privilege:
 * <ul>
 * <li>listener SECURE: SASL_SSL with SCRAM-SHA-512 (credentials added at format time with
 *     {@code kafka-storage format --add-scram});</li>
 * <li>listener MTLS: SSL with client authentication required (the principal is the client
 *     certificate's subject); also the inter-broker listener;</li>
 * <li>listener CONTROLLER: SSL with client authentication, the broker's own certificate;</li>
 * <li>StandardAuthorizer, {@code allow.everyone.if.no.acl.found=false}; super users only the broker
 *     ({@code User:CN=broker}) and the test's own clients ({@code User:admin}).</li>
 * </ul>
 * Certificates and stores are made at test time with the JDK's keytool: one self-signed key pair
 * per identity in a PKCS12 keystore, every certificate in one JKS truststore. Tiered storage is on
 * (the file RSM of tests/e2e); the broker's metadata manager is the plugin, by class.path, with
 * whatever {@code rlmm.config.*} the test gives. Every process is recorded in run.sh's pid file.
 */
public final class SecureKafka implements AutoCloseable {
    public static final String PASSWORD = "store-secret";
    public static final String ADMIN = "admin";
    public static final String ADMIN_PASSWORD = "admin-secret";

    private final Path work;
    private final Path remoteDir;
    private final Path pki;
    private final int controllerPort;
    private final int securePort;
    private final int mtlsPort;
    private final Map<String, String> rlmmConfig;
    private final Map<String, String> scramUsers;
    private Process process;

    /** `scramUsers`: name -> password created at format time (admin is added); `rlmmConfig`: rlmm.config.* and more. */
    public SecureKafka(String name, Map<String, String> scramUsers, Map<String, String> rlmmConfig) throws IOException {
        this.work = Path.of(prop("rlmeta.cluster.work")).resolve(name + "-" + System.currentTimeMillis());
        this.remoteDir = work.resolve("remote");
        this.pki = work.resolve("pki");
        Files.createDirectories(remoteDir);
        Files.createDirectories(pki);
        this.controllerPort = freePort();
        this.securePort = freePort();
        this.mtlsPort = freePort();
        this.scramUsers = new LinkedHashMap<>(scramUsers);
        this.scramUsers.put(ADMIN, ADMIN_PASSWORD);
        this.rlmmConfig = rlmmConfig;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (process != null) {
                process.destroyForcibly();
            }
        }, "secure-kafka-killer"));
    }

    private static String prop(String name) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            throw new IllegalStateException("system property " + name + " is not set (run through tests/cluster/run.sh)");
        }
        return v;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    public Path work() { return work; }
    public Path remoteDir() { return remoteDir; }
    public Path logFile() { return work.resolve("node").resolve("server.log"); }
    public Path dumpFile() { return work.resolve("node").resolve("rlmm-dump.json"); }
    public String secureBootstrap() { return "127.0.0.1:" + securePort; }
    public String mtlsBootstrap() { return "127.0.0.1:" + mtlsPort; }
    public Path truststore() { return pki.resolve("trust.jks"); }
    public Path keystore(String cn) { return pki.resolve(cn + ".p12"); }

    // ------------------------------------------------------------------ certificates (keytool)

    private void keytool(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(pki.resolve("keytool.log").toFile())).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("keytool " + String.join(" ", args) + " failed; see " + pki.resolve("keytool.log"));
        }
    }

    /** A self-signed key pair CN=`cn` (SAN 127.0.0.1) in a PKCS12 keystore, its certificate trusted by trust.jks. */
    public void identity(String cn) throws Exception {
        Path ks = keystore(cn);
        keytool("-genkeypair", "-alias", cn, "-keyalg", "RSA", "-keysize", "2048", "-validity", "2", "-dname", "CN=" + cn,
                "-ext", "SAN=IP:127.0.0.1", "-keystore", ks.toString(), "-storetype", "PKCS12",
                "-storepass", PASSWORD, "-keypass", PASSWORD);
        Path crt = pki.resolve(cn + ".crt");
        keytool("-exportcert", "-alias", cn, "-keystore", ks.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD,
                "-file", crt.toString());
        keytool("-importcert", "-noprompt", "-alias", cn, "-file", crt.toString(), "-keystore", truststore().toString(),
                "-storetype", "JKS", "-storepass", PASSWORD);
    }

    // ------------------------------------------------------------------ client settings

    /** SASL_SSL SCRAM-SHA-512 client settings for `user`. */
    public static Map<String, Object> scramClient(String bootstrap, Path truststore, String user, String password) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("bootstrap.servers", bootstrap);
        c.put("security.protocol", "SASL_SSL");
        c.put("sasl.mechanism", "SCRAM-SHA-512");
        c.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + user + "\" password=\"" + password + "\";");
        c.put("ssl.truststore.location", truststore.toString());
        c.put("ssl.truststore.type", "JKS");
        c.put("ssl.truststore.password", PASSWORD);
        return c;
    }

    /** The key and trust store settings of `cn`'s certificate (keystore PKCS12, truststore JKS). */
    private Map<String, String> stores(String cn) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("ssl.keystore.location", keystore(cn).toString());
        c.put("ssl.keystore.type", "PKCS12");
        c.put("ssl.keystore.password", PASSWORD);
        c.put("ssl.key.password", PASSWORD);
        c.put("ssl.truststore.location", truststore().toString());
        c.put("ssl.truststore.type", "JKS");
        c.put("ssl.truststore.password", PASSWORD);
        return c;
    }

    /** SSL client settings with the client certificate of `cn` (keystore PKCS12, truststore JKS). */
    public Map<String, Object> mtlsClient(String cn) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("bootstrap.servers", mtlsBootstrap());
        c.put("security.protocol", "SSL");
        c.putAll(stores(cn));
        return c;
    }

    /** The test's own super-user client settings (User:admin over SASL_SSL). */
    public Map<String, Object> adminClient() {
        return scramClient(secureBootstrap(), truststore(), ADMIN, ADMIN_PASSWORD);
    }

    public Properties adminProperties() {
        Properties p = new Properties();
        p.putAll(adminClient());
        return p;
    }

    public Admin admin() {
        Properties p = adminProperties();
        p.put("default.api.timeout.ms", 30000);
        p.put("request.timeout.ms", 10000);
        return Admin.create(p);
    }

    // ------------------------------------------------------------------ the node

    private Map<String, String> config() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("process.roles", "broker,controller");
        c.put("node.id", "1");
        c.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        c.put("listeners", "CONTROLLER://127.0.0.1:" + controllerPort + ",SECURE://127.0.0.1:" + securePort
                + ",MTLS://127.0.0.1:" + mtlsPort);
        c.put("advertised.listeners", "SECURE://127.0.0.1:" + securePort + ",MTLS://127.0.0.1:" + mtlsPort);
        c.put("listener.security.protocol.map", "CONTROLLER:SSL,SECURE:SASL_SSL,MTLS:SSL");
        c.put("controller.listener.names", "CONTROLLER");
        c.put("inter.broker.listener.name", "MTLS");
        c.putAll(stores("broker"));
        c.put("ssl.client.auth", "required");
        c.put("listener.name.secure.ssl.client.auth", "none");
        c.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
        c.put("listener.name.secure.sasl.enabled.mechanisms", "SCRAM-SHA-512");
        c.put("listener.name.secure.scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        c.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        c.put("allow.everyone.if.no.acl.found", "false");
        c.put("super.users", "User:CN=broker;User:" + ADMIN);
        c.put("log.dirs", work.resolve("node").resolve("data").toString());
        KafkaCluster.putSmallNodeDefaults(c, 1);
        c.put("remote.log.storage.system.enable", "true");
        c.put("remote.log.storage.manager.class.name", "dev.rlmeta.e2e.FileRemoteStorageManager");
        c.put("remote.log.storage.manager.class.path", prop("rlmeta.rsm.jar"));
        c.put("rsm.config.dir", remoteDir.toString());
        c.put("remote.log.manager.task.interval.ms", "1000");
        c.put("remote.log.manager.copier.thread.pool.size", "2");
        c.put("remote.log.manager.expiration.thread.pool.size", "2");
        c.put("remote.log.manager.thread.pool.size", "2");
        c.put("remote.log.reader.threads", "2");
        c.put("remote.log.metadata.manager.class.name", KafkaCluster.PLUGIN_CLASS);
        c.put("remote.log.metadata.manager.class.path", prop("rlmeta.plugin.jar"));
        c.put("rlmm.config.remote.log.metadata.topic.num.partitions", "3");
        c.put("rlmm.config.remote.log.metadata.topic.replication.factor", "1");
        c.put("rlmm.config.remote.log.metadata.topic.min.isr", "1");
        c.put("rlmm.config.remote.log.metadata.consume.wait.ms", "30000");
        c.put("rlmm.config.rlmeta.dump.path", dumpFile().toString());
        c.putAll(rlmmConfig);
        return c;
    }

    private Path writeConfig() throws IOException {
        return KafkaCluster.writeNodeFiles(work.resolve("node"), config(), logFile());
    }

    private List<String> java(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms64m");
        cmd.add("-Xmx512m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-XX:CICompilerCount=1");
        cmd.add("-Dlog4j2.configurationFile=" + work.resolve("node").resolve("log4j2.properties"));
        cmd.add("-Dlog4j2.shutdownHookEnabled=false");
        cmd.add("-Drlmeta.extract.dir=" + work.resolve("node").resolve("native"));
        cmd.add("-cp");
        cmd.add(Files.readString(Path.of(prop("rlmeta.broker.classpath.file"))).trim());
        cmd.addAll(List.of(args));
        return cmd;
    }

    private Process launch(List<String> cmd, String out) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(work.resolve("node").resolve(out).toFile())).start();
        Files.writeString(Path.of(prop("rlmeta.cluster.pids")), p.pid() + "\n",
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return p;
    }

    /** Makes the broker's identity, formats the node with the SCRAM users, starts it and waits until it is started. */
    public SecureKafka start() throws Exception {
        long t0 = System.nanoTime();
        identity("broker");
        Path config = writeConfig();
        List<String> format = new ArrayList<>(List.of("kafka.tools.StorageTool", "format", "--standalone",
                "--cluster-id", org.apache.kafka.common.Uuid.randomUuid().toString(), "--config", config.toString()));
        scramUsers.forEach((user, pw) -> {
            format.add("--add-scram");
            format.add("SCRAM-SHA-512=[name=" + user + ",password=" + pw + "]");
        });
        Process f = launch(java(format.toArray(new String[0])), "format.out");
        if (!f.waitFor(120, TimeUnit.SECONDS) || f.exitValue() != 0) {
            f.destroyForcibly();
            throw new IllegalStateException("kafka-storage format failed; see " + work.resolve("node/format.out"));
        }
        process = launch(java("kafka.Kafka", config.toString()), "stdout.log");
        KafkaCluster.await("the secured node started", Duration.ofSeconds(120), () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("the secured node exited during startup; see " + logFile());
            }
            return !logLines("Kafka Server started").isEmpty();
        });
        KafkaCluster.log("secured node started (SASL_SSL %s, mTLS %s, StandardAuthorizer) in %d s", secureBootstrap(),
                mtlsBootstrap(), (System.nanoTime() - t0) / 1_000_000_000L);
        return this;
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Lines of the node's log that contain `text`. */
    public List<String> logLines(String text) {
        if (!Files.exists(logFile())) {
            return List.of();
        }
        try (Stream<String> lines = Files.lines(logFile(), StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.contains(text)).collect(Collectors.toList());
        } catch (IOException | java.io.UncheckedIOException e) {
            return List.of();
        }
    }

    /** The RSM's journal lines. */
    public List<String> journal() {
        Path j = remoteDir.resolve("journal.txt");
        try {
            return Files.exists(j) ? Files.readAllLines(j) : List.of();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        Process p = process;
        if (p != null) {
            p.destroy();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
