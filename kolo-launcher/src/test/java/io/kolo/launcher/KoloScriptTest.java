package io.kolo.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code kolo} script in front of the launcher: which JDK it picks, where it finds the checkout, and that it hands
 * the launcher the caller's working directory and arguments unchanged. Runs a copy of the script in a made-up checkout
 * whose launcher is "built" (a stamp newer than its sources), with a made-up JDK whose {@code java} reports how it was
 * started.
 */
@Timeout(60)
class KoloScriptTest {
    private static final Path SCRIPT = Path.of("..", "kolo").toAbsolutePath().normalize();

    /** A checkout at {@code home} holding the script, a "built" launcher and an older pom. */
    private static void checkout(Path home) throws IOException {
        Files.createDirectories(home);
        Files.copy(SCRIPT, home.resolve("kolo"));
        executable(home.resolve("kolo"));
        Path target = Files.createDirectories(home.resolve("kolo-launcher/target/lib"));
        Files.writeString(home.resolve("pom.xml"), "<project/>");
        Files.setLastModifiedTime(home.resolve("pom.xml"), FileTime.from(Instant.now().minusSeconds(3600)));
        Files.writeString(target.getParent().resolve("kolo-launcher-9.9.jar"), "");
        Files.writeString(target.getParent().resolve(".kolo-built"), "");
    }

    /** A JDK at {@code home} whose release file says {@code version} and whose java prints how it was started. */
    private static Path jdk(Path home, String version) throws IOException {
        Files.createDirectories(home.resolve("bin"));
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + version + "\"\n");
        Path java = home.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\necho \"cwd=$(pwd)\"\necho \"home=$KOLO_HOME\"\necho \"jdk=$JAVA_HOME\"\n"
                + "for a in \"$@\"; do echo \"arg=$a\"; done\n");
        executable(java);
        return home;
    }

    private static void executable(Path p) throws IOException {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static List<String> run(Path script, Path cwd, Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of(script.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true);
        pb.environment().remove("JAVA_HOME");
        pb.environment().remove("KOLO_AOT");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "kolo script did not finish");
        assertEquals(0, p.exitValue(), out);
        return out.lines().toList();
    }

    @Test
    void runsTheLauncherOfItsCheckoutFromTheCallersDirectoryThroughASymlink(@TempDir Path tmp) throws Exception {
        Path home = tmp.resolve("checkout");
        checkout(home);
        Path jdk = jdk(tmp.resolve("jdk-25"), "25.0.1");
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("kolo"), home.resolve("kolo"));
        Path cwd = Files.createDirectories(tmp.resolve("work dir"));

        List<String> lines = run(bin.resolve("kolo"), cwd, Map.of("JAVA_HOME", jdk.toString()),
                "run", "-np", "2", "--", "echo", "a b");

        Path realHome = home.toRealPath();
        assertTrue(lines.contains("cwd=" + cwd.toRealPath()), lines.toString());
        assertTrue(lines.contains("home=" + realHome), lines.toString());
        assertTrue(lines.contains("jdk=" + jdk), lines.toString());
        assertTrue(lines.contains("arg=" + realHome + "/kolo-launcher/target/kolo-launcher-9.9.jar:" + realHome
                + "/kolo-launcher/target/lib/*"), lines.toString());
        int main = lines.indexOf("arg=io.kolo.launcher.Main");
        assertTrue(main > 0, lines.toString());
        assertEquals(List.of("arg=run", "arg=-np", "arg=2", "arg=--", "arg=echo", "arg=a b"),
                lines.subList(main + 1, lines.size()));
    }

    /** Scripts that start java themselves ask the kolo script for its JDK; it answers without building anything. */
    @Test
    void javaHomePrintsTheJdkItWouldUseAndBuildsNothing(@TempDir Path tmp) throws Exception {
        Path home = tmp.resolve("checkout");
        checkout(home);
        Files.delete(home.resolve("kolo-launcher/target/.kolo-built"));   // a build would be due
        Path jdk = jdk(tmp.resolve("jdk-25"), "25.0.1");
        Path old = jdk(tmp.resolve("jdk-17"), "17.0.15");
        List<String> lines = run(home.resolve("kolo"), tmp, Map.of("JAVA_HOME", old.toString(),
                "PATH", jdk.resolve("bin") + ":/usr/bin:/bin"), "--java-home");
        assertEquals(List.of(jdk.toString()), lines);
        assertTrue(Files.notExists(home.resolve("kolo-launcher/target/.kolo-built")), "it built");
    }

    /**
     * After a build the script trains the AOT caches with a two-rank job and keeps rank 0's examples cache, named in
     * the JVM's tagged output, even where another rank's file sorts first. The made-up JDK plays the training run: it
     * writes the three caches and prints what a JDK 25 prints, as kolo run tags it.
     */
    @Test
    void keepsRankZerosCacheAfterABuild(@TempDir Path tmp) throws Exception {
        Path home = tmp.resolve("checkout");
        checkout(home);
        Files.delete(home.resolve("kolo-launcher/target/.kolo-built"));
        Files.writeString(home.resolve("mvnw"), "#!/bin/sh\nmkdir -p kolo-examples/target\n");
        executable(home.resolve("mvnw"));
        Path jdk = jdk(tmp.resolve("jdk-25"), "25.0.1");
        Files.writeString(jdk.resolve("bin/java"), """
                #!/bin/sh
                for a in "$@"; do case "$a" in -XX:AOTCacheOutput=*) out="${a#-XX:AOTCacheOutput=}" ;; esac; done
                if [ -n "$out" ]; then
                  w="$(dirname "$out")"
                  echo launcher > "$out"
                  echo "rank 1" > "$w/rank-pid111.aot"
                  echo "rank 0" > "$w/rank-pid222.aot"
                  echo "[1]<stdout>:AOTCache creation is complete: $w/rank-pid111.aot 7 bytes"
                  echo "[0]<stdout>:AOTCache creation is complete: $w/rank-pid222.aot 7 bytes"
                  exit 0
                fi
                echo "ran $*"
                """);

        List<String> lines = run(home.resolve("kolo"), tmp, Map.of("JAVA_HOME", jdk.toString(), "TMPDIR", tmp.toString()),
                "--help");

        assertTrue(lines.stream().anyMatch(l -> l.startsWith("ran ") && l.endsWith("io.kolo.launcher.Main --help")),
                lines.toString());
        assertEquals("rank 0\n", Files.readString(home.resolve("kolo-examples/target/kolo-examples.aot")));
        assertEquals("launcher\n", Files.readString(home.resolve("kolo-launcher/target/kolo-launcher.aot")));
    }

    @Test
    void readsTheJdkVersionFromItsReleaseFile(@TempDir Path tmp) throws Exception {
        Path home = tmp.resolve("checkout");
        checkout(home);
        for (String version : List.of("25", "25.0.2", "26-ea", "31.1+7")) {
            Path jdk = jdk(tmp.resolve("jdk-" + version), version);
            List<String> lines = run(home.resolve("kolo"), tmp, Map.of("JAVA_HOME", jdk.toString()), "--help");
            assertTrue(lines.contains("jdk=" + jdk), version + ": " + lines);
        }
    }

    @Test
    void passesOverAJavaHomeOlderThan25(@TempDir Path tmp) throws Exception {
        Path home = tmp.resolve("checkout");
        checkout(home);
        Path old = jdk(tmp.resolve("jdk-17"), "17.0.15");
        ProcessBuilder pb = new ProcessBuilder(home.resolve("kolo").toString(), "--help").redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", old.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        // Never the JDK 17 of JAVA_HOME: another JDK 25 (the real one on PATH or in /usr/lib/jvm) is started on the
        // made-up launcher jar, which has no Main, or none is found and the script says so.
        assertTrue(!out.contains("jdk=" + old), out);
        assertTrue(out.contains("kolo: needs a JDK 25 or newer (set JAVA_HOME)")
                || out.contains("io.kolo.launcher.Main"), out);
    }
}
