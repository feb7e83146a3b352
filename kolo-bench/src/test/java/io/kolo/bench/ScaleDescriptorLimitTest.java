package io.kolo.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A job whose TCP connections need more descriptors than the process may open: its start fails at once saying so, with the
 * number each rank needs and the limit, rather than after the start timeout blaming the network or the secret.
 */
class ScaleDescriptorLimitTest {
    @Test
    void runningOutOfDescriptorsNamesTheLimitAndWhatTheJobNeeds(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("out.txt");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // 32 ranks in one process hold about 32 x 9 descriptors, well above 200 (the JVM itself takes some 50).
        Process p = new ProcessBuilder("bash", "-c", "ulimit -n 200 && exec \"$@\"", "bash", java,
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                ScaleUnderLimitMain.class.getName(), "32").redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the job neither failed nor finished in 120 s");
        } finally {
            p.destroyForcibly();
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        String step = out.lines().filter(l -> l.startsWith("step: ")).findFirst().orElse("no step line in " + out);
        assertTrue(step.startsWith("step: failed: "), step);
        for (String expected : List.of("ran out of file descriptors", "32-rank job", "about 8 for allreduce",
                "up to 33 with alltoall", "ulimit -n is 200")) {
            assertTrue(step.contains(expected), "'" + expected + "' in " + step);
        }
        assertTrue(!step.contains("KOLO_SECRET"), step);
    }
}
