package io.kolo.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;

/**
 * Random bytes for secrets, challenges and probes: the kernel's random source, {@code /dev/urandom}, where it exists
 * (Linux, macOS), else {@link SecureRandom}. Both are cryptographically strong; the JDK's {@code NativePRNG} reads
 * the same device. A {@code SecureRandom}'s first use sets up the JDK's security providers, which took a starting
 * rank tens of milliseconds on the way to its first collective (docs/performance.md, "First run"); reading the device
 * takes a fraction of one. The device is opened once, on first use, and stays open, so that a process out of file
 * descriptors (a flood of connections) still gets its challenges.
 */
public final class RandomBytes {
    private RandomBytes() {
    }

    /** Fills {@code bytes} with random bytes (opens the source on the first call, even for none). */
    public static void fill(byte[] bytes) {
        Source.fill(bytes);
    }

    /** A random {@code long}. */
    public static long nextLong() {
        byte[] b = new byte[Long.BYTES];
        fill(b);
        return ByteBuffer.wrap(b).getLong();
    }

    /** The device, or the JDK's generator where the device cannot be opened (a sandbox, another system). */
    private static final class Source {
        private static final InputStream DEVICE = open(Path.of("/dev/urandom"));
        private static final SecureRandom FALLBACK = DEVICE == null ? new SecureRandom() : null;

        private static InputStream open(Path device) {
            try {
                return Files.newInputStream(device);
            } catch (IOException | UnsupportedOperationException e) {
                return null;
            }
        }

        static void fill(byte[] bytes) {
            if (DEVICE == null) {
                FALLBACK.nextBytes(bytes);
                return;
            }
            synchronized (DEVICE) {
                try {
                    if (DEVICE.readNBytes(bytes, 0, bytes.length) != bytes.length) {
                        throw new IOException("end of file");
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read random bytes from /dev/urandom", e);
                }
            }
        }
    }
}
