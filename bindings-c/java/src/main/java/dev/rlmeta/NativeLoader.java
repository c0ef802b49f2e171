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

    private NativeLoader() {}

    static synchronized void load() {
        if (path != null) {
            return;
        }
        String explicit = System.getProperty(LIBRARY_PATH_PROPERTY);
        Path file;
        Source from;
        if (explicit != null && !explicit.isEmpty()) {
            file = Path.of(explicit).toAbsolutePath();
            from = Source.LIBRARY_PATH_PROPERTY;
        } else {
            file = extract(resourceName());
            from = Source.JAR_RESOURCE;
        }
        System.load(file.toString());
        source = from;
        path = file;
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

    /** {@code <os>-<arch>}, e.g. {@code linux-x86_64}. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "macos";
        } else if (os.startsWith("windows")) {
            os = "windows";
        }
        if (arch.equals("amd64") || arch.equals("x86-64")) {
            arch = "x86_64";
        } else if (arch.equals("arm64")) {
            arch = "aarch64";
        }
        return os + "-" + arch;
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
                        + " (" + resource + "); set -D" + LIBRARY_PATH_PROPERTY + "=<path to librlmeta_c>");
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

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
