package io.kolo.launcher;

import io.kolo.launcher.job.KoloClassPath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import static io.kolo.launcher.LauncherProcessTest.kolo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A program started with a class path that lacks Kolo: one line says so, and how to fix it. */
@Timeout(120)
class KoloClassPathTest {
    private static final String HINT = "kolo: the program's class path (";

    /** Compiles a program whose first statement uses Kolo and whose last exits with code 3. */
    private static Path program(Path dir) throws IOException, InterruptedException {
        Path source = dir.resolve("src/Train.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, """
                public class Train {
                    public static void main(String[] args) {
                        System.out.println(io.kolo.Kolo.class.getSimpleName());
                        System.exit(3);
                    }
                }
                """);
        Path classes = Files.createDirectories(dir.resolve("classes"));
        Process javac = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
                "-d", classes.toString(), "-cp", KoloClassPath.coreJar(), source.toString()).inheritIO().start();
        assertEquals(0, javac.waitFor(), "javac");
        return classes;
    }

    @Test
    void aRankThatCannotFindKoloIsExplainedInOneLine(@TempDir Path dir) throws Exception {
        Path classes = program(dir);
        LauncherProcessTest.Result r = kolo("run", "-np", "2", "-cp", classes.toString(), "Train");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("NoClassDefFoundError: io/kolo/Kolo"), r.err());
        List<String> hints = r.err().lines().filter(l -> l.startsWith(HINT)).toList();
        assertEquals(List.of(HINT + "-cp " + classes + ") lacks Kolo (no io/kolo/Kolo.class); kolo run adds nothing"
                + " to it: -cp " + classes + File.pathSeparator + KoloClassPath.coreJar()), hints, r.err());
    }

    @Test
    void anElasticJobThatStopsForItSaysSoToo(@TempDir Path dir) throws Exception {
        Path classes = program(dir);
        LauncherProcessTest.Result r = kolo("run", "-np", "2", "--min-np", "1", "-H", "localhost:2", "--reset-limit",
                "1", "-cp", classes.toString(), "Train");
        assertTrue(r.code() != 0, r.err());
        assertEquals(1, r.err().lines().filter(l -> l.startsWith(HINT + "-cp " + classes + ") lacks Kolo")).count(),
                r.err());
    }

    @Test
    void aProgramWithKoloOnItsClassPathFailsWithoutTheHint(@TempDir Path dir) throws Exception {
        Path classes = program(dir);
        LauncherProcessTest.Result r = kolo("run", "-np", "1", "-cp",
                classes + File.pathSeparator + KoloClassPath.coreJar(), "Train");
        assertEquals(3, r.code(), r.err());
        assertTrue(r.out().contains("Kolo"), r.out());
        assertTrue(r.err().lines().noneMatch(l -> l.startsWith(HINT)), r.err());
    }

    @Test
    void aJarIsCheckedWithTheJarsItsManifestNames(@TempDir Path dir) throws IOException {
        Path empty = dir.resolve("app.jar");
        try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(empty))) {
            jar.putNextEntry(new JarEntry("Train.class"));
        }
        String java = ChildCommand.javaExecutable();
        assertTrue(KoloClassPath.hintFor(List.of(java, "-jar", empty.toString()), null).isPresent());
        assertTrue(KoloClassPath.hintFor(List.of(java, "-cp", dir + File.separator + "*", "Train"), null).isPresent());
        assertTrue(KoloClassPath.hintFor(List.of(java, "-cp", dir + File.pathSeparator + KoloClassPath.coreJar(),
                "Train"), null).isEmpty());
        assertTrue(KoloClassPath.hintFor(List.of("sh", "-c", "java -cp x Train"), null).isEmpty(),
                "a command that is not java itself is not second-guessed");
    }
}
