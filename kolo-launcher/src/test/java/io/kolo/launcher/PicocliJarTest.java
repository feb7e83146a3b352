package io.kolo.launcher;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The picocli jar the {@code kolo} script puts on the launcher's class path ({@code target/lib}) is built from
 * picocli's sources for this JDK: the published jar's Java 5 class files are ones the JDK's AOT cache cannot hold
 * (docs/performance.md, "First run"). It must hold every named class of the published release (compilers number
 * anonymous and synthetic classes as they like), all in the class-file version of the launcher's own classes.
 */
class PicocliJarTest {
    private static final Path LIB = Path.of("target", "lib");

    @Test
    void launcherLibHoldsEveryPicocliClassCompiledForThisJdk() throws IOException {
        Path built = onlyPicocliJar();
        Path published = Path.of(CommandLine.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        assertNotEquals(built.toAbsolutePath(), published, "tests should see the published jar, not " + built);

        int launcherVersion;
        try (InputStream in = Main.class.getResourceAsStream("Main.class")) {
            launcherVersion = majorVersion(in);
        }
        try (JarFile ours = new JarFile(built.toFile()); JarFile theirs = new JarFile(published.toFile())) {
            // On a module path it must still be the module the launcher's module-info requires.
            assertEquals("info.picocli", java.lang.module.ModuleFinder.of(built).findAll().iterator().next()
                    .descriptor().name(), "module name of " + built);
            Set<String> missing = classes(theirs);
            missing.removeAll(classes(ours));
            missing.removeIf(PicocliJarTest::anonymous);
            assertEquals(Set.of(), missing, built + " lacks classes of the published picocli");
            try (InputStream in = theirs.getInputStream(theirs.getJarEntry("picocli/CommandLine.class"))) {
                assertTrue(majorVersion(in) < 50, "the published picocli is no longer Java 5 class files:"
                        + " the launcher could use it as it is");
            }
            for (String name : classes(ours)) {
                try (InputStream in = ours.getInputStream(ours.getJarEntry(name))) {
                    assertEquals(launcherVersion, majorVersion(in), name + "'s class-file version in " + built);
                }
            }
        }
    }

    private static Path onlyPicocliJar() throws IOException {
        try (Stream<Path> files = Files.list(LIB)) {
            List<Path> jars = files.filter(p -> p.getFileName().toString().startsWith("picocli-")).toList();
            assertEquals(1, jars.size(), "picocli jars in " + LIB.toAbsolutePath() + ": " + jars);
            return jars.getFirst();
        }
    }

    private static Set<String> classes(JarFile jar) {
        Set<String> names = new TreeSet<>();
        for (JarEntry e : java.util.Collections.list(jar.entries())) {
            if (e.getName().endsWith(".class") && !e.getName().startsWith("META-INF/")) {
                names.add(e.getName());
            }
        }
        return names;
    }

    /** {@code Outer$1.class}: a class javac names by number. */
    private static boolean anonymous(String classFile) {
        String simple = classFile.substring(classFile.lastIndexOf('$') + 1, classFile.length() - ".class".length());
        return !simple.isEmpty() && simple.chars().allMatch(Character::isDigit);
    }

    private static int majorVersion(InputStream classFile) throws IOException {
        DataInputStream in = new DataInputStream(classFile);
        assertEquals(0xCAFEBABE, in.readInt(), "not a class file");
        in.readUnsignedShort();
        return in.readUnsignedShort();
    }
}
