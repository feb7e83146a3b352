package io.kolo.spark;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * kolo-spark runs on the class path, where the JVM does not enforce kolo-core's module boundary; this keeps it to
 * kolo-core's exported packages ({@code io.kolo}, {@code io.kolo.launch}, ...) so that it would also work as a module.
 */
class CoreBoundaryTest {
    private static final Pattern INTERNAL = Pattern.compile("io\\.kolo\\.(bootstrap|transport|engine|collective)\\b");

    @Test
    void noSourceNamesAnInternalPackageOfKoloCore() throws IOException {
        List<String> offenders;
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            offenders = files.filter(p -> p.toString().endsWith(".java")).filter(p -> {
                try {
                    return INTERNAL.matcher(Files.readString(p)).find();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).map(Path::toString).sorted().toList();
        }
        assertEquals(List.of(), offenders);
    }
}
