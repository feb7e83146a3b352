package io.kolo.launcher;

import io.kolo.launcher.job.UsageException;
import io.kolo.bootstrap.IoReason;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/** Turns -jar, -cp and --example into a java command line run with the launcher's own JDK. */
final class ChildCommand {
    static final String EXAMPLES_PACKAGE = "io.kolo.examples";
    // The ranks use FFM for native memory; without this every rank prints a warning per first use.
    static final String NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";
    // kolo-core reduces float32/float64/int32/int64 with SIMD loops only when the JVM has the Vector API module.
    static final String VECTOR_API = "--add-modules=jdk.incubator.vector";

    private ChildCommand() {
    }

    /** The launcher's JDK, so ranks never run on an older java that happens to be first on PATH. */
    static String javaExecutable() {
        Path home = Path.of(System.getProperty("java.home"), "bin", "java");
        if (Files.isExecutable(home)) {
            return home.toString();
        }
        return ProcessHandle.current().info().command().orElse("java");
    }

    static List<String> forJar(String jar, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(javaExecutable(), NATIVE_ACCESS, VECTOR_API, "-jar", jar));
        cmd.addAll(args);
        return cmd;
    }

    static List<String> forClasspath(String classpath, List<String> mainAndArgs) {
        if (mainAndArgs.isEmpty()) {
            throw new UsageException("-cp " + classpath + " needs a main class after it");
        }
        List<String> cmd = new ArrayList<>(List.of(javaExecutable(), NATIVE_ACCESS, VECTOR_API, "-cp", classpath));
        cmd.addAll(mainAndArgs);
        return cmd;
    }

    static List<String> forExample(String name, List<String> args, Path koloHome) {
        return forExample(name, args, koloHome, true);
    }

    /**
     * {@code aot}: run the example for a fast start, with the examples' AOT cache if there is one and without the
     * Vector API's incubator module, since the JDK links no classes ahead of time while an incubator module is in the
     * boot layer (the ranks then reduce with Kolo's element-by-element loops). {@code KOLO_AOT=0} passes false: no
     * cache, SIMD kernels.
     */
    static List<String> forExample(String name, List<String> args, Path koloHome, boolean aot) {
        Path examplesJar = findJar(koloHome.resolve("kolo-examples/target"), "kolo-examples-")
                .orElseThrow(() -> new UsageException("no examples jar in " + koloHome.resolve("kolo-examples/target")
                        + " (build it with ./mvnw -DskipTests package, or set KOLO_HOME to the Kolo checkout)"));
        Path coreJar = findJar(koloHome.resolve("kolo-core/target"), "kolo-core-")
                .or(() -> findJar(koloHome.resolve("kolo-launcher/target/lib"), "kolo-core-"))
                .orElseThrow(() -> new UsageException("no kolo-core jar in " + koloHome.resolve("kolo-core/target")
                        + " (build it with ./mvnw -DskipTests package)"));
        List<String> available = availableExamples(examplesJar);
        String className = exampleClass(name);
        if (!available.contains(exampleName(className))) {
            throw new UsageException("no example named '" + name + "'; available: "
                    + (available.isEmpty() ? "(none)" : String.join(", ", available)));
        }
        // The examples' own dependencies (kolo-djl, DJL, PyTorch's natives) are copied to target/lib at package.
        String classpath = examplesJar + java.io.File.pathSeparator + coreJar;
        Path lib = koloHome.resolve("kolo-examples/target/lib");
        if (Files.isDirectory(lib)) {
            // The launcher's picocli first: compiled for this JDK, its classes can come from the examples' AOT cache,
            // where the published jar's Java 5 class files cannot (docs/performance.md, "First run").
            String picocli = findJar(koloHome.resolve("kolo-launcher/target/lib"), "picocli-")
                    .map(jar -> jar + java.io.File.pathSeparator).orElse("");
            classpath = examplesJar + java.io.File.pathSeparator + picocli + lib.resolve("*")
                    + java.io.File.pathSeparator + coreJar;
        }
        List<String> cmd = new ArrayList<>(List.of(javaExecutable()));
        if (aot) {
            aotCache(koloHome).ifPresent(cache -> cmd.add("-XX:AOTCache=" + cache));
        } else {
            cmd.add(VECTOR_API);
        }
        cmd.addAll(List.of(NATIVE_ACCESS, "-cp", classpath, EXAMPLES_PACKAGE + "." + className));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * The examples' JDK AOT cache, made by the {@code kolo} script after each build from a training job on exactly
     * this command line. Only one that exists is named: the JVM reports a missing one as an error, while one from an
     * older build no longer matches the jars and the JVM ignores it.
     */
    static Optional<Path> aotCache(Path koloHome) {
        Path cache = koloHome.resolve("kolo-examples/target/kolo-examples.aot");
        return Files.isRegularFile(cache) ? Optional.of(cache) : Optional.empty();
    }

    /** {@code allreduce} -> {@code AllreduceExample}, {@code ring-allreduce} -> {@code RingAllreduceExample}. */
    static String exampleClass(String name) {
        StringBuilder sb = new StringBuilder();
        for (String part : name.split("[-_]")) {
            if (!part.isEmpty()) {
                sb.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
            }
        }
        return sb + "Example";
    }

    /** The inverse of {@link #exampleClass}: {@code RingAllreduceExample} -> {@code ring-allreduce}. */
    static String exampleName(String className) {
        String stem = className.substring(0, className.length() - "Example".length());
        return stem.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    static List<String> availableExamples(Path examplesJar) {
        String prefix = EXAMPLES_PACKAGE.replace('.', '/') + "/";
        try (JarFile jar = new JarFile(examplesJar.toFile())) {
            return jar.stream()
                    .map(e -> e.getName())
                    .filter(n -> n.startsWith(prefix) && n.endsWith("Example.class") && !n.contains("$")
                            && n.indexOf('/', prefix.length()) < 0)
                    .map(n -> n.substring(prefix.length(), n.length() - ".class".length()))
                    .filter(n -> n.length() > "Example".length())
                    .map(ChildCommand::exampleName)
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UsageException("cannot read the examples jar " + examplesJar + ": " + IoReason.of(e));
        }
    }

    private static Optional<Path> findJar(Path dir, String prefix) {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> {
                        String n = p.getFileName().toString();
                        return n.startsWith(prefix) && n.endsWith(".jar") && !n.endsWith("-sources.jar")
                                && !n.endsWith("-javadoc.jar") && !n.endsWith("-tests.jar");
                    })
                    .sorted()
                    .findFirst();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * KOLO_HOME (set by the ./kolo script) or, failing that, the checkout the launcher was loaded from:
     * kolo-launcher/target/kolo-launcher-*.jar and kolo-launcher/target/classes both sit three levels
     * below it.
     */
    static Path koloHome(Map<String, String> env) {
        String home = env.get("KOLO_HOME");
        if (home != null && !home.isBlank()) {
            return Path.of(home);
        }
        try {
            Path self = Path.of(ChildCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path root = self.getParent() != null && self.getParent().getParent() != null
                    ? self.getParent().getParent().getParent() : null;
            if (root != null) {
                return root;
            }
        } catch (URISyntaxException | RuntimeException ignored) {
            // Fall through to the usage error below.
        }
        throw new UsageException("cannot find the Kolo checkout for --example: set KOLO_HOME");
    }
}
