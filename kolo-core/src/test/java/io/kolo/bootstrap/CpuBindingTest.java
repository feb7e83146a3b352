package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class CpuBindingTest {

    @Test
    void readsTheKernelsCpuListFormat() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), CpuBinding.parseList(" 0-3,8,10-11\n"));
        assertEquals(List.of(5), CpuBinding.parseList("5"));
    }

    @Test
    void noneOrNothingBindsNothing() {
        assertEquals(List.of(), CpuBinding.apply(Map.of(), 0, 2));
        assertEquals(List.of(), CpuBinding.apply(Map.of("KOLO_BIND_TO", "none"), 0, 2));
    }

    @Test
    void anUnknownBindingIsRejectedNamingTheVariable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CpuBinding.apply(Map.of("KOLO_BIND_TO", "numa"), 0, 2));
        assertTrue(e.getMessage().contains("KOLO_BIND_TO='numa'") && e.getMessage().contains("core, socket or none"),
                e.getMessage());
    }

    @Test
    void moreRanksThanCpusOnAHostAreLeftUnbound() {
        assertEquals(List.of(), CpuBinding.apply(Map.of("KOLO_BIND_TO", "core"), 0, 100_000));
    }

    /** In a child JVM, since binding pins every thread of the process that asks. */
    @Test
    void coreBindsEveryThreadOfTheProcessIncludingLaterOnesToTheLocalRanksCpu() throws Exception {
        assumeTrue(Files.exists(Path.of("/proc/self/status")), "skipped: no /proc (not Linux)");
        List<Integer> cpus = CpuBinding.allowedCpus();
        assumeTrue(cpus.size() >= 2, "skipped: this process may use only " + cpus + "; binding needs two CPUs");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                CpuBindingChild.class.getName(), "1", "2")
                .redirectErrorStream(true).start();
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child did not finish");
        String out = new String(child.getInputStream().readAllBytes());
        assertEquals(0, child.exitValue(), out);
        List<String> lines = out.lines().filter(l -> l.startsWith("thread ")).toList();
        assertTrue(lines.size() > 5, "expected the JVM's threads and a late one:\n" + out);
        assertTrue(out.contains("bound to " + cpus.get(1)), out);
        for (String line : lines) {
            assertTrue(line.endsWith(": " + cpus.get(1)), "not bound to CPU " + cpus.get(1) + ": " + line);
        }
        assertTrue(lines.stream().anyMatch(l -> l.contains("late-thread")), out);
    }

    @Test
    void socketBindsEveryThreadToEveryCpuOfTheRanksProcessorPackage() throws Exception {
        assumeTrue(Files.exists(Path.of("/proc/self/status")), "skipped: no /proc (not Linux)");
        List<Integer> cpus = CpuBinding.allowedCpus();
        // Local rank 1 of 2 starts from the middle of the allowed CPUs; its package is that CPU's.
        List<Integer> expected = CpuBinding.samePackage(cpus.get(cpus.size() / 2), cpus);
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                CpuBindingChild.class.getName(), "1", "2", "socket")
                .redirectErrorStream(true).start();
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child did not finish");
        String out = new String(child.getInputStream().readAllBytes());
        assertEquals(0, child.exitValue(), out);
        List<String> lines = out.lines().filter(l -> l.startsWith("thread ")).toList();
        assertTrue(lines.size() > 5, "expected the JVM's threads and a late one:\n" + out);
        for (String line : lines) {
            assertEquals(expected, CpuBinding.parseList(line.substring(line.lastIndexOf(": ") + 2)), line);
        }
        assertTrue(lines.stream().anyMatch(l -> l.contains("late-thread")), out);
    }
}
