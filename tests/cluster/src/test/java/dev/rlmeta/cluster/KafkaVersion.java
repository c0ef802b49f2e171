package dev.rlmeta.cluster;

import java.nio.file.Path;

/**
 * The Kafka a cluster's brokers run: its version and the file holding its class path (resolved
 * from Maven Central by tests/cluster/broker/pom.xml, or this module's own 4.4.0 class path). The
 * configs that differ between versions are decided here, each from the release that changed it.
 */
public final class KafkaVersion {
    private final String version;
    private final Path classPathFile;
    private final int major;
    private final int minor;

    public KafkaVersion(String version, Path classPathFile) {
        String[] p = version.split("\\.");
        if (p.length < 2) {
            throw new IllegalArgumentException("not a Kafka version: " + version);
        }
        this.version = version;
        this.classPathFile = classPathFile;
        this.major = Integer.parseInt(p[0]);
        this.minor = Integer.parseInt(p[1]);
    }

    /**
     * The version the cluster tests run by default: rlmeta.kafka.version and
     * rlmeta.broker.classpath.file (this module's Kafka unless `make cluster-test KAFKA_VERSION=..`).
     */
    public static KafkaVersion current() {
        String v = System.getProperty("rlmeta.kafka.version", "");
        String cp = System.getProperty("rlmeta.broker.classpath.file", "");
        if (v.isBlank() || cp.isBlank()) {
            throw new IllegalStateException("rlmeta.kafka.version / rlmeta.broker.classpath.file are not set "
                    + "(run through tests/cluster/run.sh)");
        }
        return new KafkaVersion(v, Path.of(cp));
    }

    public String version() { return version; }

    /**
     * The JVM this version's brokers run on: Kafka 3.x on the Java 11 runtime that
     * rlmeta.java11.home names (as most 3.x clusters run; `make version-matrix-test` installs one),
     * 4.x (which needs Java 17) and any version without that property on this JVM.
     */
    public Path javaHome() {
        String java11 = System.getProperty("rlmeta.java11.home", "");
        return major < 4 && !java11.isBlank() ? Path.of(java11) : Path.of(System.getProperty("java.home"));
    }

    /** "Java 11.0.13": the version of {@link #javaHome} from its release file. */
    public String javaName() {
        try {
            for (String line : java.nio.file.Files.readAllLines(javaHome().resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=")) {
                    return "Java " + line.substring("JAVA_VERSION=".length()).replace("\"", "");
                }
            }
        } catch (java.io.IOException e) {
            // no release file: say where it is
        }
        return "Java at " + javaHome();
    }
    public Path classPathFile() { return classPathFile; }

    public boolean atLeast(int maj, int min) {
        return major > maj || (major == maj && minor >= min);
    }

    /**
     * KIP-853 (3.9): controller.quorum.bootstrap.servers and `format --standalone/--no-initial-controllers`;
     * before it only a static controller.quorum.voters.
     */
    public boolean dynamicQuorum() {
        return atLeast(3, 9);
    }

    /**
     * The topic config that makes 16 KiB segments: 4.1 raised segment.bytes' minimum to 1 MiB and
     * added internal.segment.bytes (test-only) for smaller ones (LogConfig of the 4.0.2 and 4.1.2
     * jars); 3.x and 4.0 take segment.bytes as small.
     */
    public String smallSegmentConfig() {
        return atLeast(4, 1) ? "internal.segment.bytes" : "segment.bytes";
    }

    @Override
    public String toString() {
        return version;
    }
}
