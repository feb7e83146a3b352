package io.kolo.launcher.job;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * Whether a rank's java command has Kolo on its class path. {@code kolo run} adds nothing to {@code -cp}, so a program
 * bundled without Kolo dies at its first use of it with a {@code NoClassDefFoundError} that does not say what to do:
 * when such a rank fails, the launcher adds one line saying so.
 */
public final class KoloClassPath {
    private static final String KOLO_CLASS = "io/kolo/Kolo.class";

    private KoloClassPath() {
    }

    /**
     * The hint for a failed rank that ran {@code program}, or empty when its class path holds Kolo or cannot be told
     * from its command line (not {@code java -cp} or {@code java -jar}).
     */
    public static Optional<String> hintFor(List<String> program, String workingDirectory) {
        Path base = Path.of(workingDirectory == null ? "" : workingDirectory).toAbsolutePath();
        if (program.isEmpty() || !Path.of(program.getFirst()).getFileName().toString().equals("java")) {
            return Optional.empty();
        }
        for (int i = 1; i < program.size() - 1; i++) {
            String arg = program.get(i);
            if (arg.equals("-cp") || arg.equals("-classpath") || arg.equals("--class-path")) {
                String cp = program.get(i + 1);
                return holdsKolo(entries(base, cp)) ? Optional.empty()
                        : Optional.of(hint("-cp " + cp, "-cp " + cp + File.pathSeparator + coreJar()));
            }
            if (arg.equals("-jar")) {
                String jar = program.get(i + 1);
                return holdsKolo(List.of(base.resolve(jar))) ? Optional.empty()
                        : Optional.of(hint("-jar " + jar, "bundle Kolo into " + jar + ", or run -cp " + jar
                                + File.pathSeparator + coreJar() + " MAIN"));
            }
            if (!arg.startsWith("-")) {
                return Optional.empty();   // the main class: no class path option before it
            }
        }
        return Optional.empty();
    }

    private static String hint(String given, String fix) {
        return "kolo: the program's class path (" + given + ") lacks Kolo (no " + KOLO_CLASS
                + "); kolo run adds nothing to it: " + fix;
    }

    /** The kolo-core jar (or classes) this launcher runs with: it exists, and matches the launcher. */
    public static String coreJar() {
        try {
            return Path.of(io.kolo.Kolo.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException | RuntimeException e) {
            return "kolo-core/target/kolo-core-0.1.0-SNAPSHOT.jar";
        }
    }

    private static List<Path> entries(Path base, String classpath) {
        List<Path> paths = new ArrayList<>();
        for (String entry : classpath.split(File.pathSeparator, -1)) {
            if (entry.isEmpty()) {
                paths.add(base);
            } else if (entry.equals("*") || entry.endsWith(File.separator + "*")) {
                Path dir = base.resolve(entry.substring(0, entry.length() - 1));
                try (DirectoryStream<Path> jars = Files.newDirectoryStream(dir, "*.{jar,JAR}")) {
                    jars.forEach(paths::add);
                } catch (IOException | RuntimeException ignored) {
                    // A wildcard over a directory that is not there adds nothing, as for java itself.
                }
            } else {
                paths.add(base.resolve(entry));
            }
        }
        return paths;
    }

    private static boolean holdsKolo(List<Path> paths) {
        for (Path p : paths) {
            if (Files.isDirectory(p) ? Files.isRegularFile(p.resolve(KOLO_CLASS)) : jarHoldsKolo(p, 0)) {
                return true;
            }
        }
        return false;
    }

    /** The jar, or a jar its manifest's Class-Path names (as {@code java -jar} and {@code -cp} follow them). */
    private static boolean jarHoldsKolo(Path jar, int depth) {
        if (!Files.isRegularFile(jar) || depth > 3) {
            return false;
        }
        try (JarFile file = new JarFile(jar.toFile())) {
            if (file.getEntry(KOLO_CLASS) != null) {
                return true;
            }
            Manifest manifest = file.getManifest();
            String refs = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
            if (refs != null) {
                Path base = jar.toAbsolutePath().getParent();
                for (String ref : refs.strip().split("\\s+")) {
                    Path p = base.resolve(ref);
                    if (Files.isDirectory(p) ? Files.isRegularFile(p.resolve(KOLO_CLASS)) : jarHoldsKolo(p, depth + 1)) {
                        return true;
                    }
                }
            }
            return false;
        } catch (IOException | RuntimeException e) {
            return true;   // unreadable here: say nothing rather than something wrong
        }
    }
}
