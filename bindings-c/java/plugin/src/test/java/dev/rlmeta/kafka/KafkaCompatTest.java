package dev.rlmeta.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.junit.jupiter.api.Test;

/**
 * KafkaCompat's run-time probes on real Kafka jars from Maven Central (3.7.2, 4.1.2, 4.2.2, 4.3.2,
 * 4.4.0: storage-api, storage, clients, server-common), each version with the plugin's classes in a
 * class loader of its own, as a broker of that version holds them. Each probe must find what the
 * jar has (its entries, its methods by reflection), and the jars must have what javap showed
 * (RetriableRemoteStorageException from 4.2, adminProperties()/metadataTopicMinIsr() from 4.3).
 */
class KafkaCompatTest {
    private static final String ENTRY = KafkaCompat.RETRIABLE_CLASS.replace('.', '/') + ".class";
    private static final String CONFIG =
            "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManagerConfig";

    private static Path jarsDir() {
        return Path.of(System.getProperty("rlmeta.compat.jars"));
    }

    private static List<Path> versionDirs() throws IOException {
        try (Stream<Path> s = Files.list(jarsDir())) {
            return s.filter(Files::isDirectory).sorted().collect(Collectors.toList());
        }
    }

    private static Path jar(Path dir, String artifact) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(artifact + "-")).findFirst()
                    .orElseThrow(() -> new AssertionError("no " + artifact + " jar in " + dir));
        }
    }

    private static boolean jarHas(Path jar, String entry) throws IOException {
        try (JarFile j = new JarFile(jar.toFile())) {
            return j.getEntry(entry) != null;
        }
    }

    /** The plugin's classes over one version's Kafka jars (and slf4j-api), nothing from the test class path. */
    private static URLClassLoader loader(Path dir) throws IOException {
        List<URL> urls = new ArrayList<>();
        urls.add(new File(System.getProperty("rlmeta.compat.classes")).toURI().toURL());
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.sorted().collect(Collectors.toList())) {
                urls.add(p.toUri().toURL());
            }
        }
        urls.add(jar(jarsDir(), "slf4j-api").toUri().toURL());
        return new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    }

    private static boolean atLeast(String version, int major, int minor) {
        String[] p = version.split("\\.");
        int ma = Integer.parseInt(p[0]);
        int mi = Integer.parseInt(p[1]);
        return ma > major || (ma == major && mi >= minor);
    }

    private static Object call(Class<?> c, String name, Class<?>[] types, Object... args) throws Throwable {
        Method m = c.getDeclaredMethod(name, types);
        m.setAccessible(true);
        try {
            return m.invoke(null, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void theRetriableExceptionProbeFindsWhatEachStorageApiJarHas() throws Throwable {
        List<Path> dirs = versionDirs();
        assertEquals(5, dirs.size(), "version directories in " + jarsDir() + ": " + dirs);
        int with = 0;
        for (Path dir : dirs) {
            String version = dir.getFileName().toString();
            boolean has = jarHas(jar(dir, "kafka-storage-api"), ENTRY);
            assertEquals(atLeast(version, 4, 2), has, version + ": RetriableRemoteStorageException in storage-api");
            try (URLClassLoader l = loader(dir)) {
                Class<?> compat = l.loadClass(KafkaCompat.class.getName());
                assertFalse(compat == KafkaCompat.class, "KafkaCompat must come from the isolated loader");
                Class<?> rse = l.loadClass(RemoteStorageException.class.getName());
                assertEquals(has, call(compat, "hasRetriableRemoteStorageException", new Class<?>[0]),
                        version + ": the probe");
                IllegalStateException cause = new IllegalStateException("why");
                Object e = call(compat, "retriable", new Class<?>[] {String.class, Throwable.class}, "not yet", cause);
                assertNotNull(e);
                assertTrue(rse.isInstance(e), version + ": " + e.getClass() + " is not a RemoteStorageException");
                assertSame(cause, ((Throwable) e).getCause(), version + ": the cause is kept");
                assertTrue(((Throwable) e).getMessage().startsWith("not yet"), version + ": the message is kept");
                String want = has ? KafkaCompat.RETRIABLE_CLASS : KafkaCompat.RetryLaterException.class.getName();
                assertEquals(want, e.getClass().getName(), version + ": the retriable error's class");
                if (has) {
                    assertSame(l.loadClass(KafkaCompat.RETRIABLE_CLASS), e.getClass(),
                            version + ": the broker's own class, from its loader");
                    with++;
                }
                System.out.printf("[compat] %s: RetriableRemoteStorageException %s -> %s%n", version,
                        has ? "present" : "absent", e.getClass().getName());
            }
        }
        assertEquals(3, with, "versions with RetriableRemoteStorageException (4.2.2, 4.3.2, 4.4.0)");
    }

    @Test
    void theConfigProbesFollowEachVersionsTopicBasedConfig() throws Throwable {
        for (Path dir : versionDirs()) {
            String version = dir.getFileName().toString();
            try (URLClassLoader l = loader(dir)) {
                Class<?> compat = l.loadClass(KafkaCompat.class.getName());
                Class<?> configClass = l.loadClass(CONFIG);
                boolean hasAdmin = Stream.of(configClass.getMethods()).anyMatch(m -> m.getName().equals("adminProperties"));
                boolean hasMinIsr = Stream.of(configClass.getMethods()).anyMatch(m -> m.getName().equals("metadataTopicMinIsr"));
                assertEquals(atLeast(version, 4, 3), hasAdmin, version + ": adminProperties()");
                assertEquals(hasAdmin, hasMinIsr, version + ": metadataTopicMinIsr()");
                Map<String, Object> raw = new HashMap<>();
                raw.put("remote.log.metadata.common.client.bootstrap.servers", "127.0.0.1:9");
                raw.put("remote.log.metadata.admin.client.id", "rlmeta-admin");
                raw.put("broker.id", 1);
                raw.put("log.dir", System.getProperty("java.io.tmpdir"));
                Constructor<?> ctor = configClass.getConstructor(Map.class);
                Object withoutIsr = ctor.newInstance(raw);
                Class<?>[] types = {configClass, Map.class};
                @SuppressWarnings("unchecked")
                Map<String, Object> admin = (Map<String, Object>) call(compat, "adminProperties",
                        new Class<?>[] {configClass}, withoutIsr);
                assertEquals("127.0.0.1:9", admin.get("bootstrap.servers"), version + ": admin bootstrap");
                int defaultIsr = (int) call(compat, "metadataTopicMinIsr", types, withoutIsr, raw);
                raw.put(KafkaCompat.TOPIC_MIN_ISR, "1");
                Object withIsr = ctor.newInstance(raw);
                int givenIsr = (int) call(compat, "metadataTopicMinIsr", types, withIsr, raw);
                assertEquals(1, givenIsr, version + ": a given min.isr");
                if (hasAdmin) {
                    Object expected = configClass.getMethod("adminProperties").invoke(withoutIsr);
                    assertEquals(expected, admin, version + ": adminProperties() itself");
                    assertEquals(((Short) configClass.getMethod("metadataTopicMinIsr").invoke(withoutIsr)).intValue(),
                            defaultIsr, version + ": the config's default min.isr");
                } else {
                    assertEquals(configClass.getMethod("commonProperties").invoke(withoutIsr), admin,
                            version + ": commonProperties() where there is no adminProperties()");
                    assertEquals(-1, defaultIsr, version + ": no min.isr given: the broker default");
                    raw.put(KafkaCompat.TOPIC_MIN_ISR, "zero");
                    Map<String, Object> bad = new HashMap<>(raw);
                    Object badConfig = ctor.newInstance(bad);
                    Throwable t = assertThrows(Throwable.class,
                            () -> call(compat, "metadataTopicMinIsr", types, badConfig, bad));
                    assertEquals("org.apache.kafka.common.config.ConfigException", t.getClass().getName());
                    assertTrue(t.getMessage().contains(KafkaCompat.TOPIC_MIN_ISR), t.getMessage());
                }
                System.out.printf("[compat] %s: adminProperties() %s, metadataTopicMinIsr() %s (default %d)%n",
                        version, hasAdmin ? "present" : "absent: commonProperties()",
                        hasMinIsr ? "present" : "absent: the raw config", defaultIsr);
            }
        }
    }

    @Test
    void onTheCompileTimeApiTheFallbackIsUsed() {
        // the plugin compiles against Kafka 3.7.2 (provided: also the test class path)
        assertFalse(KafkaCompat.hasRetriableRemoteStorageException());
        RemoteStorageException e = KafkaCompat.retriable("the level is not known yet");
        assertEquals(KafkaCompat.RetryLaterException.class, e.getClass());
        assertEquals("the level is not known yet (retriable)", e.getMessage());
    }

    @Test
    void aLoaderWithoutTheClassGivesNoConstructor() throws Exception {
        try (URLClassLoader empty = new URLClassLoader(new URL[0], ClassLoader.getPlatformClassLoader())) {
            assertNull(KafkaCompat.retriableConstructor(empty));
        }
    }
}
