package io.kolo.bootstrap;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * This host's name as its kernel knows it ({@code gethostname}), for host keys and messages. On Linux it is read
 * from {@code /proc/sys/kernel/hostname}: {@code InetAddress.getLocalHost()} would also resolve the name to an
 * address, which nothing here needs, which waits for DNS where the name is not in {@code /etc/hosts}, and whose
 * first use looks for resolver providers on the whole class path, opening every jar there (docs/performance.md,
 * "First run").
 */
public final class HostName {
    private static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

    private HostName() {
    }

    /** The host's name; empty when neither the kernel's file nor the JDK gives one. */
    public static Optional<String> local() {
        try {
            String name = Files.readString(KERNEL_HOSTNAME).trim();
            if (!name.isEmpty()) {
                return Optional.of(name);
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux, or no /proc: ask the JDK.
        }
        try {
            return Optional.of(InetAddress.getLocalHost().getHostName());
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
