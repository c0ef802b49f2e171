package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import org.junit.jupiter.api.Test;

/**
 * Every reference the plugin jar's class files make to a Kafka member (method, constructor, field:
 * read from their constant pools) resolves on the class path of every Kafka in rlmeta.matrix.versions,
 * as the JVM would resolve it (the named class, then its superclasses and interfaces). A reference
 * that is missing on some version is a NoSuchMethodError or NoClassDefFoundError waiting on that
 * broker, whether or not a test reaches the code. The plugin's run-time probes (KafkaCompat) use
 * reflection, not references, and are checked by KafkaCompatTest.
 */
class PluginLinkageTest {
    /** The one class of the jar compiled against Kafka 4.1+ (it implements Monitorable): linked only where that exists. */
    static final String KAFKA41_CLASS = "dev/rlmeta/kafka/MonitorableRlmetaRemoteLogMetadataManager";
    static final String MONITORABLE = "org.apache.kafka.common.metrics.Monitorable";

    private record Ref(String from, boolean field, String owner, String name, String descriptor) {
        @Override
        public String toString() {
            return owner + "." + name + descriptor;
        }
    }

    @Test
    void everyKafkaReferenceOfThePluginResolvesOnEveryVersion() throws Exception {
        String list = System.getProperty("rlmeta.matrix.versions", "");
        String dir = System.getProperty("rlmeta.matrix.classpaths", "");
        String jar = System.getProperty("rlmeta.plugin.jar", "");
        if (list.isBlank() || dir.isBlank() || jar.isBlank()) {
            throw new IllegalStateException("rlmeta.matrix.versions / .classpaths / rlmeta.plugin.jar are not set "
                    + "(make version-matrix-test)");
        }
        Set<String> namers = new TreeSet<>();
        List<Ref> refs = kafkaRefs(Path.of(jar), namers);
        // no other class names it, so no other class can make the JVM load it on a Kafka without Monitorable
        assertTrue(namers.equals(Set.of(KAFKA41_CLASS)), "classes that name " + KAFKA41_CLASS + ": " + namers);
        assertTrue(refs.size() > 20, "Kafka references found in " + jar + ": " + refs.size());
        List<String> failures = new ArrayList<>();
        for (String v : list.split(",")) {
            String[] cp = Files.readString(Path.of(dir, v.trim() + ".classpath")).trim().split(java.io.File.pathSeparator);
            URL[] urls = new URL[cp.length];
            for (int i = 0; i < cp.length; i++) {
                urls[i] = Path.of(cp[i]).toUri().toURL();
            }
            List<String> missing = new ArrayList<>();
            int checked = 0;
            boolean monitorable;
            try (URLClassLoader l = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
                try {
                    Class.forName(MONITORABLE, false, l);
                    monitorable = true;
                } catch (ClassNotFoundException e) {
                    monitorable = false;
                }
                for (Ref r : refs) {
                    if (r.from().equals(KAFKA41_CLASS) && !monitorable) {
                        continue; // never loaded there: Kafka 3.7..4.0 have no Monitorable to implement
                    }
                    checked++;
                    try {
                        if (!resolves(Class.forName(r.owner(), false, l), r)) {
                            missing.add(r.toString());
                        }
                    } catch (ClassNotFoundException | LinkageError e) {
                        missing.add(r + " (" + e + ")");
                    }
                }
            }
            System.out.printf("[linkage] %s: %d of %d Kafka member references of the plugin resolve (%s)%s%n", v.trim(),
                    checked - missing.size(), checked, monitorable ? "with the Monitorable class"
                            : "without the Monitorable class, which this version cannot load and never names",
                    missing.isEmpty() ? "" : "; missing: " + missing);
            if (!missing.isEmpty()) {
                failures.add(v.trim() + ": " + missing);
            }
        }
        assertTrue(failures.isEmpty(), "unresolved references: " + failures);
    }

    /**
     * The distinct Fieldref/Methodref/InterfaceMethodref entries naming an org.apache.kafka class, by
     * the class that makes them; `namers` gets every class whose constant pool names KAFKA41_CLASS.
     */
    private static List<Ref> kafkaRefs(Path jar, Set<String> namers) throws IOException {
        Set<String> seen = new TreeSet<>();
        List<Ref> out = new ArrayList<>();
        try (JarFile j = new JarFile(jar.toFile())) {
            for (JarEntry e : java.util.Collections.list(j.entries())) {
                if (!e.getName().endsWith(".class")) {
                    continue;
                }
                DataInputStream in = new DataInputStream(new ByteArrayInputStream(j.getInputStream(e).readAllBytes()));
                in.readInt();
                in.readUnsignedShort();
                in.readUnsignedShort();
                int n = in.readUnsignedShort();
                String[] utf = new String[n];
                int[] tags = new int[n];
                int[] a = new int[n];
                int[] b = new int[n];
                for (int i = 1; i < n; i++) {
                    int t = in.readUnsignedByte();
                    tags[i] = t;
                    switch (t) {
                        case 1 -> utf[i] = in.readUTF();
                        case 3, 4 -> in.readInt();
                        case 5, 6 -> { in.readLong(); i++; }
                        case 7, 8, 16, 19, 20 -> a[i] = in.readUnsignedShort();
                        case 9, 10, 11, 12, 17, 18 -> { a[i] = in.readUnsignedShort(); b[i] = in.readUnsignedShort(); }
                        case 15 -> { in.readUnsignedByte(); a[i] = in.readUnsignedShort(); }
                        default -> throw new IOException(e.getName() + ": constant pool tag " + t);
                    }
                }
                String from = e.getName().substring(0, e.getName().length() - ".class".length());
                for (int i = 1; i < n; i++) {
                    if (tags[i] == 7 && KAFKA41_CLASS.equals(utf[a[i]])) {
                        namers.add(from);
                    }
                    if (tags[i] < 9 || tags[i] > 11) {
                        continue;
                    }
                    String owner = utf[a[a[i]]];
                    String name = utf[a[b[i]]];
                    String desc = utf[b[b[i]]];
                    if (owner.startsWith("org/apache/kafka/") && seen.add(from + tags[i] + owner + name + desc)) {
                        out.add(new Ref(from, tags[i] == 9, owner.replace('/', '.'), name, desc));
                    }
                }
            }
        }
        return out;
    }

    private static String descriptor(Class<?> ret, Class<?>... params) {
        return MethodType.methodType(ret, params).toMethodDescriptorString();
    }

    private static boolean resolves(Class<?> owner, Ref r) {
        if (r.name().equals("<init>")) {
            for (Constructor<?> c : owner.getDeclaredConstructors()) {
                if (descriptor(void.class, c.getParameterTypes()).equals(r.descriptor())) {
                    return true;
                }
            }
            return false;
        }
        Deque<Class<?>> todo = new ArrayDeque<>();
        todo.add(owner);
        if (owner.isInterface()) {
            todo.add(Object.class);
        }
        Set<Class<?>> done = new HashSet<>();
        while (!todo.isEmpty()) {
            Class<?> k = todo.poll();
            if (!done.add(k)) {
                continue;
            }
            if (r.field()) {
                for (Field f : k.getDeclaredFields()) {
                    if (f.getName().equals(r.name()) && r.descriptor().equals(
                            descriptor(f.getType()).substring(2))) {
                        return true;
                    }
                }
            } else {
                for (Method m : k.getDeclaredMethods()) {
                    if (m.getName().equals(r.name())
                            && descriptor(m.getReturnType(), m.getParameterTypes()).equals(r.descriptor())) {
                        return true;
                    }
                }
            }
            if (k.getSuperclass() != null) {
                todo.add(k.getSuperclass());
            }
            todo.addAll(List.of(k.getInterfaces()));
        }
        return false;
    }
}
