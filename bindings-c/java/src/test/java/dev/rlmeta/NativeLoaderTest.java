package dev.rlmeta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
        assertEquals("/dev/rlmeta/native/" + NativeLoader.platform() + "/librlmeta_c-" + NativeLoader.version() + ".so", resource);
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

        // what a host logs: the resource (naming the platform), this JVM's os.arch, the file
        assertEquals(resource.substring(1) + " (os.arch " + System.getProperty("os.arch") + ") from " + loaded,
                RlMeta.nativeLibrary());
    }

    /** Each os.arch a JVM on x86_64 Linux reports (amd64 on Linux, x86_64 elsewhere) picks linux-x86_64. */
    @Test
    void x86_64ArchNames() {
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "x86_64"));
    }

    /** Each os.arch a JVM on 64-bit ARM Linux reports (aarch64, or arm64 on some builds) picks linux-aarch64. */
    @Test
    void aarch64ArchNames() {
        assertEquals("linux-aarch64", NativeLoader.platform("Linux", "aarch64"));
        assertEquals("linux-aarch64", NativeLoader.platform("Linux", "arm64"));
    }

    /** This JVM's own os.arch maps to the directory of the library it loaded. */
    @Test
    void thisJvmsArch() {
        RlMeta.version();
        String expected = NativeLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        assertEquals(NativeLoader.platform(), expected);
        assertTrue(NativeLoader.carried().contains(expected), NativeLoader.carried().toString());
    }

    /** Any other arch is a typed error naming the arch and the platforms this jar carries. */
    @Test
    void unsupportedArch() {
        List<String> carried = NativeLoader.carried();
        assertTrue(carried.contains(NativeLoader.platform()), carried.toString()); // the library this test run loads
        for (String arch : List.of("ppc64le", "s390x", "riscv64", "x86", "arm", "")) {
            UnsupportedPlatformError e = assertThrows(UnsupportedPlatformError.class,
                    () -> NativeLoader.platform("Linux", arch));
            assertEquals(arch, e.getOsArch());
            assertEquals("Linux", e.getOsName());
            assertEquals(carried, e.getCarried());
            assertTrue(e.getMessage().contains("os.arch \"" + arch + "\""), e.getMessage());
            assertTrue(e.getMessage().contains("this jar carries " + String.join(", ", carried) + " "), e.getMessage());
            assertTrue(e instanceof UnsatisfiedLinkError);
        }
    }

    /** A supported arch on another operating system is the same typed error. */
    @Test
    void unsupportedOs() {
        UnsupportedPlatformError e = assertThrows(UnsupportedPlatformError.class,
                () -> NativeLoader.platform("Mac OS X", "aarch64"));
        assertEquals("Mac OS X", e.getOsName());
        assertTrue(e.getMessage().contains("os.name \"Mac OS X\", os.arch \"aarch64\""), e.getMessage());
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
        // rlmeta.test.launcher: a command the child JVM runs under (make jni-aarch64-test: qemu-aarch64)
        List<String> command = new ArrayList<>();
        for (String word : System.getProperty("rlmeta.test.launcher", "").split(" ")) {
            if (!word.isEmpty()) {
                command.add(word);
            }
        }
        command.addAll(List.of(java.toString(), "-Xcheck:jni", property, "-cp", classPath, Probe.class.getName()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(p.waitFor(180, TimeUnit.SECONDS), "child JVM timed out"); // a hang guard (qemu is slow), not a timing check
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
