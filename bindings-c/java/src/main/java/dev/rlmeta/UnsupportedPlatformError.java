package dev.rlmeta;

import java.util.List;

/**
 * This JVM's operating system or CPU architecture (its {@code os.name} and {@code os.arch}) has no
 * rlmeta native library: rlmeta ships libraries for Linux on x86_64 ({@code os.arch} amd64 or
 * x86_64) and on aarch64 ({@code os.arch} aarch64 or arm64). The message names the reported
 * values and the platforms the jar on the class path carries; {@code -Drlmeta.library.path} loads
 * a library built for this platform instead.
 */
public final class UnsupportedPlatformError extends UnsatisfiedLinkError {
    private static final long serialVersionUID = 1L;

    private final String osName;
    private final String osArch;
    private final List<String> carried;

    UnsupportedPlatformError(String osName, String osArch, List<String> carried) {
        super("rlmeta: unsupported platform: os.name \"" + osName + "\", os.arch \"" + osArch
                + "\"; this jar carries " + NativeLoader.describe(carried) + " (supported: Linux with os.arch "
                + "amd64/x86_64 or aarch64/arm64); set -D" + NativeLoader.LIBRARY_PATH_PROPERTY
                + "=<path to librlmeta_c> to load a library built for this platform");
        this.osName = osName;
        this.osArch = osArch;
        this.carried = List.copyOf(carried);
    }

    /** The {@code os.name} this JVM reported. */
    public String getOsName() {
        return osName;
    }

    /** The {@code os.arch} this JVM reported. */
    public String getOsArch() {
        return osArch;
    }

    /** The platforms ({@code <os>-<arch>}) whose library the jar carries. */
    public List<String> getCarried() {
        return carried;
    }
}
