package dev.rlmeta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeLoaderTest {

    /** The library this JVM runs is the jar's resource, extracted to rlmeta.extract.dir. */
    @Test
    void loadedFromTheJarResource() throws IOException {
        assertEquals(NativeLoader.version(), RlMeta.version()); // initialises RlMeta
        assertNull(System.getProperty(NativeLoader.LIBRARY_PATH_PROPERTY));
        assertEquals(NativeLoader.Source.JAR_RESOURCE, NativeLoader.source());

        String resource = NativeLoader.resourceName();
        assertEquals("/dev/rlmeta/native/linux-x86_64/librlmeta_c-" + NativeLoader.version() + ".so", resource);
        byte[] packaged;
        try (InputStream in = RlMeta.class.getResourceAsStream(resource)) {
            assertNotNull(in, resource);
            packaged = in.readAllBytes();
        }
        Path loaded = NativeLoader.path();
        Path extractDir = Path.of(System.getProperty(NativeLoader.EXTRACT_DIR_PROPERTY)).toAbsolutePath();
        assertTrue(loaded.startsWith(extractDir), loaded + " is not under " + extractDir);
        assertArrayEquals(packaged, Files.readAllBytes(loaded), "the extracted file is the resource");

        // The process has mapped exactly that file, and no librlmeta_c from elsewhere.
        List<String> mapped = Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains("librlmeta_c")).map(l -> l.substring(l.indexOf('/'))).distinct().toList();
        assertEquals(List.of(loaded.toString()), mapped);
    }

    /** rlmeta.library.path loads an explicit file instead (in a fresh JVM). */
    @Test
    void explicitLibraryPath(@TempDir Path dir) throws Exception {
        RlMeta.version();
        Path copy = dir.resolve("custom-name.so");
        Files.copy(NativeLoader.path(), copy);
        String out = runJvm(System.getProperty("java.class.path"), "-D" + NativeLoader.LIBRARY_PATH_PROPERTY + "=" + copy);
        assertEquals("LIBRARY_PATH_PROPERTY " + copy + " " + NativeLoader.version() + " file", out.strip());
    }

    /** With no rlmeta.extract.dir, extraction goes to java.io.tmpdir (in a fresh JVM), and twice reuses it. */
    @Test
    void extractsToTmpdirAndReuses(@TempDir Path dir) throws Exception {
        String first = runJvm(System.getProperty("java.class.path"), "-Djava.io.tmpdir=" + dir).strip();
        String second = runJvm(System.getProperty("java.class.path"), "-Djava.io.tmpdir=" + dir).strip();
        assertTrue(first.startsWith("JAR_RESOURCE " + dir + "/rlmeta-" + NativeLoader.version() + "-"), first);
        assertEquals(first, second);
        try (var s = Files.list(dir)) {
            assertEquals(1, s.count(), "one extraction directory");
        }
    }

    /** Packs the main classes into a jar, as `mvn package` does, and runs from it in a fresh JVM. */
    @Test
    void loadsFromAPackagedJar(@TempDir Path dir) throws Exception {
        Path classes = Path.of(RlMeta.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path jar = dir.resolve("rlmeta.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
                Stream<Path> files = Files.walk(classes)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
        Path probe = Path.of(Probe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path extract = dir.resolve("extract");
        String out = runJvm(jar + File.pathSeparator + probe, "-D" + NativeLoader.EXTRACT_DIR_PROPERTY + "=" + extract).strip();
        assertTrue(out.startsWith("JAR_RESOURCE " + extract + "/rlmeta-" + NativeLoader.version() + "-"), out);
        assertTrue(out.endsWith(" " + NativeLoader.version() + " jar"), out);
    }

    private static String runJvm(String classPath, String property) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-Xcheck:jni", property,
                "-cp", classPath, Probe.class.getName())
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM timed out");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    /** Run in a child JVM: loads the library and prints where from. */
    public static final class Probe {
        public static void main(String[] args) {
            String v = RlMeta.version();
            String protocol = RlMeta.class.getResource(NativeLoader.resourceName()).getProtocol();
            System.out.println(NativeLoader.source() + " " + NativeLoader.path() + " " + v + " " + protocol);
        }
    }
}
