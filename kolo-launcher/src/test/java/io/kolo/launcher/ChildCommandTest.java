package io.kolo.launcher;

import io.kolo.launcher.job.UsageException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChildCommandTest {

    @Test
    void exampleNames() {
        assertEquals("AllreduceExample", ChildCommand.exampleClass("allreduce"));
        assertEquals("RingAllreduceExample", ChildCommand.exampleClass("ring-allreduce"));
        assertEquals("allreduce", ChildCommand.exampleName("AllreduceExample"));
        assertEquals("ring-allreduce", ChildCommand.exampleName("RingAllreduceExample"));
    }

    @Test
    void exampleRunsWithTheExamplesAndCoreJars(@TempDir Path home) throws IOException {
        Path examples = fakeCheckout(home);
        List<String> cmd = ChildCommand.forExample("allreduce", List.of("--size", "8"), home);
        // No AOT cache yet, and no incubator module: the cache the kolo script makes is trained on this command.
        assertEquals(List.of(ChildCommand.javaExecutable(), "--enable-native-access=ALL-UNNAMED", "-cp",
                examples + ":" + home.resolve("kolo-core/target/kolo-core-0.1.0-SNAPSHOT.jar"),
                "io.kolo.examples.AllreduceExample", "--size", "8"), cmd);
        assertEquals(List.of("allreduce", "ring-allreduce"), ChildCommand.availableExamples(examples));
    }

    @Test
    void exampleRanksTakeTheLaunchersPicocliBeforeTheirOwn(@TempDir Path home) throws IOException {
        Path examples = fakeCheckout(home);
        Path lib = Files.createDirectories(home.resolve("kolo-examples/target/lib"));
        Path picocli = Files.createDirectories(home.resolve("kolo-launcher/target/lib")).resolve("picocli-4.7.7.jar");
        Files.writeString(picocli, "");
        List<String> cmd = ChildCommand.forExample("allreduce", List.of(), home);
        assertEquals(examples + ":" + picocli + ":" + lib.resolve("*") + ":"
                + home.resolve("kolo-core/target/kolo-core-0.1.0-SNAPSHOT.jar"), cmd.get(cmd.indexOf("-cp") + 1));
    }

    @Test
    void exampleRanksUseTheExamplesAotCacheOnlyWhenThereIsOne(@TempDir Path home) throws IOException {
        fakeCheckout(home);
        assertTrue(ChildCommand.forExample("allreduce", List.of(), home).stream()
                .noneMatch(a -> a.startsWith("-XX:AOTCache")), "no cache yet, yet the command names one");
        Path cache = Files.writeString(home.resolve("kolo-examples/target/kolo-examples.aot"), "");
        List<String> cmd = ChildCommand.forExample("allreduce", List.of(), home);
        // A JVM option: before the class path and the main class.
        assertEquals("-XX:AOTCache=" + cache, cmd.get(1));
        // An incubator module turns the JDK's ahead-of-time linking off: with a cache there is none.
        assertTrue(cmd.stream().noneMatch(a -> a.contains("jdk.incubator.vector")), cmd.toString());
        List<String> noAot = ChildCommand.forExample("allreduce", List.of(), home, false);
        assertTrue(noAot.stream().noneMatch(a -> a.startsWith("-XX:AOTCache")), "KOLO_AOT=0, yet: " + noAot);
        assertTrue(noAot.contains(ChildCommand.VECTOR_API), "KOLO_AOT=0 runs the SIMD kernels: " + noAot);
    }

    @Test
    void unknownExampleListsTheAvailableOnes(@TempDir Path home) throws IOException {
        fakeCheckout(home);
        UsageException e = assertThrows(UsageException.class, () -> ChildCommand.forExample("mnist", List.of(), home));
        assertEquals("no example named 'mnist'; available: allreduce, ring-allreduce", e.getMessage());
    }

    @Test
    void missingExamplesJarIsAUsageError(@TempDir Path home) {
        UsageException e = assertThrows(UsageException.class,
                () -> ChildCommand.forExample("allreduce", List.of(), home));
        assertTrue(e.getMessage().startsWith("no examples jar in"), e.getMessage());
    }

    @Test
    void koloHomeFromEnvironmentOrFromTheLauncherLocation() {
        assertEquals(Path.of("/opt/kolo"), ChildCommand.koloHome(Map.of("KOLO_HOME", "/opt/kolo")));
        // In the build the launcher is loaded from kolo-launcher/target/classes: home is the checkout.
        Path home = ChildCommand.koloHome(Map.of());
        assertTrue(Files.isDirectory(home.resolve("kolo-launcher")), home.toString());
    }

    private static Path fakeCheckout(Path home) throws IOException {
        Files.createDirectories(home.resolve("kolo-examples/target"));
        Files.createDirectories(home.resolve("kolo-core/target"));
        Files.writeString(home.resolve("kolo-core/target/kolo-core-0.1.0-SNAPSHOT.jar"), "");
        Path jar = home.resolve("kolo-examples/target/kolo-examples-0.1.0-SNAPSHOT.jar");
        Files.writeString(home.resolve("kolo-examples/target/kolo-examples-0.1.0-SNAPSHOT-sources.jar"), "");
        try (OutputStream o = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(o)) {
            for (String name : List.of("io/kolo/examples/AllreduceExample.class",
                    "io/kolo/examples/AllreduceExample$Args.class", "io/kolo/examples/RingAllreduceExample.class",
                    "io/kolo/examples/Util.class", "io/kolo/examples/sub/NestedExample.class")) {
                j.putNextEntry(new JarEntry(name));
                j.closeEntry();
            }
        }
        return jar;
    }
}
