package dev.rlmeta;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads the rlmeta native library once per class loader.
 *
 * <ul>
 *   <li>System property {@code rlmeta.library.path}: load this file (absolute or relative path).
 *   <li>Otherwise the library inside the jar, resource
 *       {@code /dev/rlmeta/native/<os>-<arch>/librlmeta_c-<version>.so}, is extracted to
 *       {@code <dir>/rlmeta-<version>-<sha256 prefix>/} and loaded from there, where {@code <dir>} is
 *       the system property {@code rlmeta.extract.dir} or else {@code java.io.tmpdir}. The directory
 *       is named by the library's content, so an extracted copy is reused only when it is the same
 *       library (its content is checked before loading), and concurrent JVMs never see a partial file.
 * </ul>
 *
 * <p>{@code java.library.path} is never used, so the library loaded is always the one built with
 * this jar.
 */
final class NativeLoader {
    static final String LIBRARY_PATH_PROPERTY = "rlmeta.library.path";
    static final String EXTRACT_DIR_PROPERTY = "rlmeta.extract.dir";

    /** Where the loaded library came from. */
    enum Source { LIBRARY_PATH_PROPERTY, JAR_RESOURCE }

    private static Source source;
    private static Path path;
    private static String origin;

    private NativeLoader() {}

    static synchronized void load() {
        if (path != null) {
            return;
        }
        String explicit = System.getProperty(LIBRARY_PATH_PROPERTY);
        Path file;
        Source from;
        String described;
        if (explicit != null && !explicit.isEmpty()) {
            file = Path.of(explicit).toAbsolutePath();
            from = Source.LIBRARY_PATH_PROPERTY;
            described = "-D" + LIBRARY_PATH_PROPERTY + " " + file;
        } else {
            String resource = resourceName();
            file = extract(resource);
            from = Source.JAR_RESOURCE;
            described = resource.substring(1) + " (os.arch " + System.getProperty("os.arch", "") + ") from "
                    + file;
        }
        System.load(file.toString());
        source = from;
        path = file;
        origin = described;
    }

    /**
     * Which library was loaded, for a host's log: the jar resource (naming its platform, e.g.
     * {@code dev/rlmeta/native/linux-aarch64/librlmeta_c-0.1.0.so}) and this JVM's os.arch, or the
     * rlmeta.library.path file; null before it is loaded.
     */
    static synchronized String origin() {
        return origin;
    }

    /** Where the library was loaded from (null before it is loaded). */
    static synchronized Source source() {
        return source;
    }

    /** The file the library was loaded from (null before it is loaded). */
    static synchronized Path path() {
        return path;
    }

    /** The version of this jar (and of the native library inside it). */
    static String version() {
        Properties p = new Properties();
        try (InputStream in = NativeLoader.class.getResourceAsStream("rlmeta.properties")) {
            if (in == null) {
                throw new IllegalStateException("rlmeta: dev/rlmeta/rlmeta.properties is missing from the jar");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p.getProperty("version");
    }

    /** The platforms a jar can carry a library for, as {@code <os>-<arch>} resource directories. */
    static final List<String> KNOWN_PLATFORMS = List.of("linux-x86_64", "linux-aarch64");

    /** {@code <os>-<arch>} of this JVM, e.g. {@code linux-x86_64}. */
    static String platform() {
        return platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    /**
     * The resource directory for a JVM reporting these {@code os.name} and {@code os.arch}:
     * Linux with amd64 or x86_64 is {@code linux-x86_64}, Linux with aarch64 or arm64 is
     * {@code linux-aarch64}; anything else throws {@link UnsupportedPlatformError} naming both and
     * the platforms this jar carries.
     */
    static String platform(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        String cpu = null;
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            cpu = "x86_64";
        } else if (arch.equals("aarch64") || arch.equals("arm64")) {
            cpu = "aarch64";
        }
        if (!os.startsWith("linux") || cpu == null) {
            throw new UnsupportedPlatformError(osName, osArch, carried());
        }
        return "linux-" + cpu;
    }

    /** The platforms whose library this jar (class path) carries, in {@link #KNOWN_PLATFORMS} order. */
    static List<String> carried() {
        String file = fileName();
        List<String> found = new ArrayList<>();
        for (String p : KNOWN_PLATFORMS) {
            if (NativeLoader.class.getResource("/dev/rlmeta/native/" + p + "/" + file) != null) {
                found.add(p);
            }
        }
        return found;
    }

    /** The versioned file name of the library, e.g. {@code librlmeta_c-0.1.0.so}. */
    static String fileName() {
        return System.mapLibraryName("rlmeta_c-" + version());
    }

    /** The resource holding the library for this platform. */
    static String resourceName() {
        return "/dev/rlmeta/native/" + platform() + "/" + fileName();
    }

    private static Path extract(String resource) {
        byte[] library;
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("rlmeta: this jar has no native library for " + platform()
                        + " (" + resource + "; it carries " + describe(carried()) + "); set -D"
                        + LIBRARY_PATH_PROPERTY + "=<path to librlmeta_c>");
            }
            library = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("rlmeta: cannot read " + resource, e);
        }
        String base = System.getProperty(EXTRACT_DIR_PROPERTY);
        if (base == null || base.isEmpty()) {
            base = System.getProperty("java.io.tmpdir");
        }
        byte[] digest = sha256(library);
        Path dir = Path.of(base).toAbsolutePath()
                .resolve("rlmeta-" + version() + "-" + Hex.of(digest, 0, 8));
        Path file = dir.resolve(fileName());
        try {
            createPrivateDirectory(dir);
            if (Files.isRegularFile(file) && MessageDigest.isEqual(sha256(Files.readAllBytes(file)), digest)) {
                return file;
            }
            Path tmp = Files.createTempFile(dir, fileName(), ".tmp");
            try {
                Files.write(tmp, library);
                try {
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("rlmeta: cannot extract the native library to " + dir
                    + " (set -D" + EXTRACT_DIR_PROPERTY + "=<writable directory>)", e);
        }
    }

    /** Creates the directory (owner-only where the file system has POSIX permissions); refuses one owned by another user. */
    private static void createPrivateDirectory(Path dir) throws IOException {
        Files.createDirectories(dir.getParent());
        boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
        try {
            if (posix) {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } else {
                Files.createDirectory(dir);
            }
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir)) {
                throw e;
            }
        }
        String me = System.getProperty("user.name");
        if (posix && me != null) {
            String owner = Files.getOwner(dir).getName();
            if (!owner.equals(me)) {
                throw new IOException(dir + " belongs to " + owner + ", not to " + me);
            }
        }
    }

    static String describe(List<String> platforms) {
        return platforms.isEmpty() ? "no native library" : String.join(", ", platforms);
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
