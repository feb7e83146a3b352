package io.kolo.bootstrap;

import io.kolo.BadSettingException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one home of the KOLO_* settings: complete, documented, and the only place that reads them. */
class KoloSettingsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private static TreeSet<String> names() {
        TreeSet<String> names = new TreeSet<>();
        KoloSettings.all().forEach(s -> names.add(s.name()));
        return names;
    }

    /** Every row of docs/settings.md's variable table names a setting the code reads, and every setting has a row. */
    @Test
    void readmeTableAndSettingsNameTheSameVariables() throws IOException {
        String readme = Files.readString(ROOT.resolve("docs/settings.md"));
        int table = readme.indexOf("## `KOLO_*` variables");
        assertTrue(table >= 0, "docs/settings.md has no KOLO_* variables section");
        TreeSet<String> documented = new TreeSet<>();
        for (String line : readme.substring(table).lines().skip(1).takeWhile(l -> !l.startsWith("## ")).toList()) {
            if (line.startsWith("| `KOLO_")) {
                Matcher m = Pattern.compile("`(KOLO_[A-Z0-9_]+)`").matcher(line.substring(0, line.indexOf(" | ", 2)));
                while (m.find()) {
                    documented.add(m.group(1));
                }
            }
        }
        assertEquals(names(), documented, "docs/settings.md's KOLO_* table and KoloSettings differ");
    }

    /** No main code of kolo-core reads a KOLO_* variable by name except through KoloSettings. */
    @Test
    void nothingElseInCoreReadsAKoloVariable() throws IOException {
        Pattern read = Pattern.compile("(get|getOrDefault|containsKey|getenv)\\(\\s*\"KOLO_");
        List<String> offenders = new ArrayList<>();
        try (Stream<Path> files = Files.walk(ROOT.resolve("kolo-core/src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                if (f.getFileName().toString().equals("KoloSettings.java")) {
                    continue;
                }
                List<String> lines = Files.readAllLines(f);
                for (int i = 0; i < lines.size(); i++) {
                    if (read.matcher(lines.get(i)).find()) {
                        offenders.add(f.getFileName() + ":" + (i + 1) + ": " + lines.get(i).strip());
                    }
                }
            }
        }
        assertEquals(List.of(), offenders);
    }

    @Test
    void eachBadValueIsOneLineNamingTheVariableAndWhatIsExpected() {
        List<String> problems = KoloSettings.problems(Map.of("KOLO_CYCLE_TIME", "fast", "KOLO_TRANSPORT", "carrier-pigeon",
                "KOLO_FUSION_THRESHOLD", "1000", "KOLO_UNKNOWN_TO_KOLO", "anything", "PATH", "/bin"));
        assertEquals(List.of("KOLO_CYCLE_TIME='fast' is invalid: expected a non-negative number of milliseconds",
                "KOLO_TRANSPORT='carrier-pigeon' is invalid: expected auto (shared memory within a host, TCP between"
                        + " hosts), shm (the same, but fail if /dev/shm is unusable) or tcp"), problems);
        assertTrue(problems.stream().noneMatch(p -> p.contains("\n")));
    }

    /**
     * A number too large for its type said only "expected a positive integer", which 9999999999 is: every integer
     * setting now says its range, and every number setting without a smaller bound says its largest value.
     */
    @Test
    void aNumberBeyondItsTypeSaysTheAllowedRange() {
        assertEquals(List.of("KOLO_RANK='-1' is invalid: expected a non-negative integer (0 to 2147483647)",
                        "KOLO_TIMEOUT_SECONDS='9999999999' is invalid: expected a positive integer (1 to 2147483647)"),
                KoloSettings.problems(Map.of("KOLO_TIMEOUT_SECONDS", "9999999999", "KOLO_RANK", "-1")));
        List<String> checked = new ArrayList<>();
        for (KoloSettings.Setting<?> s : KoloSettings.all()) {
            if (whole(s)) {
                BadSettingException e = assertThrows(BadSettingException.class,
                        () -> s.from(Map.of(s.name(), "99999999999999999999")), s.name());
                assertTrue(e.getMessage().matches(".* (to|at most) [0-9]+\\b.*"), e.getMessage());
                checked.add(s.name());
            }
        }
        assertTrue(checked.containsAll(List.of("KOLO_SIZE", "KOLO_LOCAL_RANK", "KOLO_FUSION_THRESHOLD",
                "KOLO_STALL_CHECK_TIME_SECONDS", "KOLO_SHM_RING_BYTES")), checked.toString());
    }

    /** A setting whose values are whole numbers (Integer or Long), told by what it makes of a small one. */
    private static boolean whole(KoloSettings.Setting<?> s) {
        for (String v : List.of("1", "4096")) {
            try {
                Object value = s.from(Map.of(s.name(), v));
                if (value instanceof Integer || value instanceof Long) {
                    return true;
                }
            } catch (BadSettingException e) {
                // Out of this setting's range: try the other.
            }
        }
        return false;
    }

    @Test
    void theSecretIsNeverEchoed() {
        String almost = "0123456789abcdef0123456789abcde";   // one hex digit short
        BadSettingException e = assertThrows(BadSettingException.class,
                () -> KoloSettings.SECRET.from(Map.of("KOLO_SECRET", almost)));
        assertEquals("KOLO_SECRET", e.variable());
        assertFalse(e.getMessage().contains(almost), e.getMessage());
        assertTrue(e.getMessage().contains("not shown"), e.getMessage());
    }

    @Test
    void unsetOrBlankIsTheDefaultAndChoicesComeOutCanonical() {
        assertEquals(128L << 20, KoloSettings.FUSION_THRESHOLD.from(Map.of()));
        assertEquals(60, KoloSettings.START_TIMEOUT_SECONDS.from(Map.of("KOLO_START_TIMEOUT_SECONDS", " ")));
        assertEquals("on", KoloSettings.HIERARCHICAL_ALLREDUCE.from(Map.of("KOLO_HIERARCHICAL_ALLREDUCE", "Yes")));
        assertEquals("off", KoloSettings.SHM_SINGLE_COPY.from(Map.of("KOLO_SHM_SINGLE_COPY", " 0 ")));
        assertEquals("fp16", KoloSettings.COMPRESSION.from(Map.of("KOLO_COMPRESSION", "float16")));
    }

    /** Horovod's variable is read where Kolo's own is unset, and a bad value is reported under the name that was set. */
    @Test
    void horovodsVariablesStandInForUnsetKoloOnes() throws IOException {
        assertEquals(2.5, KoloSettings.CYCLE_TIME.from(Map.of("HOROVOD_CYCLE_TIME", "2.5")));
        assertEquals(4.0, KoloSettings.CYCLE_TIME.from(Map.of("HOROVOD_CYCLE_TIME", "2.5", "KOLO_CYCLE_TIME", "4")));
        assertEquals("debug", KoloSettings.LOG_LEVEL.from(Map.of("HOROVOD_LOG_LEVEL", "DEBUG")));
        assertEquals(List.of("HOROVOD_STALL_CHECK_DISABLE='maybe' is invalid: expected 0 or 1"),
                KoloSettings.problems(Map.of("HOROVOD_STALL_CHECK_DISABLE", "maybe")));
        assertEquals(List.of(), KoloSettings.problems(Map.of("HOROVOD_CYCLE_TIME", "bad", "KOLO_CYCLE_TIME", "1")),
                "Kolo's own variable is the one read, so Horovod's is not checked");
        assertEquals(Map.of("KOLO_FUSION_THRESHOLD", "64"), KoloSettings.fromHorovod(Map.of("HOROVOD_FUSION_THRESHOLD",
                "64", "HOROVOD_CACHE_CAPACITY", "3", "KOLO_CACHE_CAPACITY", "4", "HOROVOD_UNKNOWN", "x")));

        // docs/settings.md's table of Horovod's variables is exactly the aliases.
        String readme = Files.readString(ROOT.resolve("docs/settings.md"));
        TreeSet<String> documented = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `(HOROVOD_[A-Z_]+)` \\| `(KOLO_[A-Z_]+)`").matcher(readme);
        while (row.find()) {
            documented.add(row.group(1) + "=" + row.group(2));
        }
        TreeSet<String> aliases = new TreeSet<>();
        KoloSettings.all().stream().filter(x -> x.horovodName() != null)
                .forEach(x -> aliases.add(x.horovodName() + "=" + x.name()));
        assertEquals(aliases, documented, "docs/settings.md's table of Horovod's variables and KoloSettings differ");
    }
}
