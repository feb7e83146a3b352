package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link HostName} gives the name the kernel and the JDK give, without resolving it. */
class HostNameTest {

    @Test
    void theKernelsNameOnLinux() throws Exception {
        Path kernel = Path.of("/proc/sys/kernel/hostname");
        assumeTrue(Files.isReadable(kernel), "no /proc/sys/kernel/hostname here (not Linux)");
        assertEquals(Files.readString(kernel).trim(), HostName.local().orElseThrow());
    }

    @Test
    void theNameTheJdkGivesWhereItResolves() {
        String jdk;
        try {
            jdk = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            assumeTrue(false, "this host's name does not resolve here: " + e.getMessage());
            return;
        }
        assertEquals(jdk, HostName.local().orElseThrow());
    }
}
