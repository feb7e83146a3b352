package io.kolo.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A real (in-JVM, two ranks) run of every collective, through the report, JSON and plots. */
class ReportTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Report run(Collective collective, ElementType type, String sizes, boolean compare, Map<String, String> env)
            throws InterruptedException {
        return run(collective, type, Memory.NATIVE, sizes, compare, env);
    }

    private Report run(Collective collective, ElementType type, Memory memory, String sizes, boolean compare,
                       Map<String, String> env) throws InterruptedException {
        BenchSuite.Config config = new BenchSuite.Config(collective, 2, Sizes.parse(sizes), type, memory, 3, 1,
                List.of("tcp"), compare, 2, Duration.ofMinutes(2), "./kolo bench " + collective.id());
        return BenchSuite.run(config, new InJvmKolo(2, dir), env, new PrintStream(new ByteArrayOutputStream()));
    }

    @Test
    void javaArraysAreMeasuredAndCheckedForEveryType() throws Exception {
        // Every array kind through allreduce, and a collective whose result is a new tensor (each run warms up the JIT).
        for (Collective c : List.of(Collective.ALLREDUCE, Collective.ALLGATHER, Collective.BROADCAST)) {
            for (ElementType type : c == Collective.ALLREDUCE ? List.of(ElementType.values())
                    : List.of(c == Collective.ALLGATHER ? ElementType.F64 : ElementType.I64)) {
                // The worker checks each size's first result, so a wrong answer from array memory fails the run.
                Report report = run(c, type, Memory.HEAP, "1KiB,64KiB", false, Map.of());
                JsonNode kolo = JSON.readTree(report.json()).get("series").get(0);
                assertEquals("Kolo tcp heap", kolo.get("name").asText(), c.id() + " " + type.id());
                assertEquals("ok", kolo.get("status").asText(), c.id() + " " + type.id());
                assertEquals(2, kolo.get("results").size(), c.id() + " " + type.id());
            }
        }
    }

    @Test
    void everyCollectiveMeasuresEverySizeAndTheJsonSaysSo() throws Exception {
        for (Collective c : Collective.values()) {
            Report report = run(c, ElementType.F32, "1KiB,64KiB", false, Map.of());
            JsonNode json = JSON.readTree(report.json());
            assertEquals(c.id(), json.get("collective").asText());
            assertEquals(2, json.get("ranks").asInt());
            assertEquals(c.busFactor(2), json.get("bus_factor").asDouble());
            assertEquals("f32", json.get("dtype").asText());
            JsonNode series = json.get("series");
            assertEquals(1, series.size());
            JsonNode kolo = series.get(0);
            assertEquals("Kolo tcp", kolo.get("name").asText());
            assertEquals("ok", kolo.get("status").asText());
            JsonNode results = kolo.get("results");
            assertEquals(2, results.size(), c.id());
            for (int i = 0; i < 2; i++) {
                JsonNode r = results.get(i);
                assertEquals(i == 0 ? 1024 : 65536, r.get("bytes").asLong());
                assertEquals(3, r.get("iterations").asInt());
                double min = r.get("min_us").asDouble();
                double median = r.get("median_us").asDouble();
                double max = r.get("max_us").asDouble();
                double avg = r.get("avg_us").asDouble();
                assertTrue(0 < min && min <= median && median <= max && min <= avg && avg <= max, r.toString());
                double algbw = r.get("algbw_gbps").asDouble();
                assertEquals(r.get("bytes").asDouble() / (avg * 1e-6) / 1e9, algbw, algbw * 1e-3);
                assertEquals(algbw * c.busFactor(2), r.get("busbw_gbps").asDouble(), algbw * 1e-3);
            }
            String table = report.table();
            assertTrue(table.contains("Kolo tcp") && table.contains("1KiB") && table.contains("64KiB"), table);
        }
    }

    @Test
    void otherTypesRunToo() throws Exception {
        for (ElementType t : List.of(ElementType.F64, ElementType.BF16, ElementType.F16)) {
            Report report = run(Collective.ALLREDUCE, t, "8B,4KiB", false, Map.of());
            assertEquals(2, report.series().getFirst().measurements().size(), t.id());
        }
    }

    @Test
    void missingPeersAreReportedAsSkippedNotFailures() throws Exception {
        Path emptyPath = Files.createDirectories(dir.resolve("empty-bin"));
        Report report = run(Collective.ALLREDUCE, ElementType.F32, "1KiB", true,
                Map.of("PATH", emptyPath.toString(), "KOLO_BENCH_PYTHON", dir.resolve("no-python").toString(),
                        "HOME", dir.toString()));
        assertEquals(List.of("Kolo tcp", "OMPI shm", "OMPI tcp", "Gloo"),
                report.series().stream().map(Series::name).toList());
        for (Series s : report.series().subList(1, 4)) {
            assertEquals(Series.Status.SKIPPED, s.status(), s.toString());
        }
        assertTrue(report.series("OMPI shm").reason().contains("no mpirun on PATH"), report.series("OMPI shm").reason());
        assertTrue(report.series("Gloo").reason().contains("not found"), report.series("Gloo").reason());
        String table = report.table();
        assertTrue(table.contains("OMPI shm: skipped (Open MPI not found"), table);
        JsonNode json = JSON.readTree(report.json());
        JsonNode gloo = json.get("series").get(3);
        assertEquals("skipped", gloo.get("status").asText());
        assertTrue(gloo.get("results").isArray() && gloo.get("results").isEmpty(), gloo.toString());
        JsonNode ratio = json.get("ratios").get(0);
        assertEquals("Kolo tcp", ratio.get("kolo").asText());
        assertTrue(ratio.get("by_size").isArray() && ratio.get("by_size").isEmpty(), ratio.toString());
    }

    @Test
    void plotsAreWellFormedSvgAndPngWithOneLinePerSeries() throws Exception {
        Report report = new Report(Collective.ALLREDUCE, 2, ElementType.F32, "cmd", Step.plan(new long[] {8, 1024, 1 << 20}, 3, 1),
                List.of(Series.ok("Kolo shm", List.of(m(8, 10e-6), m(1024, 12e-6), m(1 << 20, 300e-6))),
                        Series.ok("OMPI <shm> & co", List.of(m(8, 1e-6), m(1024, 2e-6), m(1 << 20, 400e-6))),
                        Series.skipped("Gloo", "not installed")),
                List.of(new Comparison("Kolo shm", "OMPI <shm> & co")), Map.of());
        Path svg = dir.resolve("plots/out.svg");
        new Plot(report).write(svg);
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        // The DOCTYPE names the SVG 1.1 DTD on w3.org; parse without fetching it.
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        Document doc = factory.newDocumentBuilder().parse(svg.toFile());
        Element root = doc.getDocumentElement();
        assertEquals("svg", root.getTagName());
        assertEquals(String.valueOf(Plot.WIDTH), root.getAttribute("viewBox").split(" ")[2]);
        assertEquals("allreduce bus bandwidth, 2 ranks, higher is better",
                root.getElementsByTagName("title").item(0).getTextContent());
        String desc = root.getElementsByTagName("desc").item(0).getTextContent();
        for (String named : List.of("Kolo shm", "OMPI <shm> & co", Plot.X_TITLE, Plot.Y_TITLE, "8B to 1MiB")) {
            assertTrue(desc.contains(named), named + " in " + desc);
        }
        assertFalse(desc.contains("Gloo"), "a skipped series is not plotted: " + desc);
        String text = Files.readString(svg, StandardCharsets.UTF_8);
        assertTrue(text.contains("stroke:rgb(31,119,180)") && text.contains("stroke:rgb(214,39,40)"),
                "each measured series is drawn in its colour");
        assertFalse(text.contains("rgb(44,160,44)"), "the skipped series takes no colour");

        Path png = dir.resolve("out.png");
        new Plot(report).write(png);
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(Plot.WIDTH, image.getWidth());
        assertEquals(Plot.HEIGHT, image.getHeight());
        assertTrue(pixels(image, 0x1f77b4) > 100, "Kolo shm in its colour: " + pixels(image, 0x1f77b4) + " pixels");
        assertTrue(pixels(image, 0xd62728) > 100, "OMPI in its colour: " + pixels(image, 0xd62728) + " pixels");
        assertEquals(0, pixels(image, 0x2ca02c), "the skipped series takes no colour");
        assertThrows(IllegalArgumentException.class, () -> new Plot(report).write(dir.resolve("out.pdf")));

        // Ratios: peer time over Kolo time per size, > 1 when Kolo is faster; printed and in the JSON.
        JsonNode bySize = JSON.readTree(report.json()).get("ratios").get(0).get("by_size");
        assertEquals(3, bySize.size());
        assertEquals(0.1, bySize.get(0).get("ratio").asDouble(), 1e-9);
        assertEquals(400.0 / 300.0, bySize.get(2).get("ratio_median").asDouble(), 1e-5);
        assertTrue(report.table().lines().anyMatch(l -> l.trim().startsWith("1MiB") && l.trim().endsWith("1.33x")),
                report.table());
    }

    @Test
    void sizeAxisIsLabelledInSizesAtPowersOfTwoOnly() {
        assertEquals("8B", Plot.sizeLabel(3));
        assertEquals("1KiB", Plot.sizeLabel(10));
        assertEquals("256MiB", Plot.sizeLabel(28));
        assertEquals("", Plot.sizeLabel(10.5), "no label between powers of two");
        assertEquals(10, Plot.niceCeiling(7.9));
        assertEquals(0.25, Plot.niceCeiling(0.21), 1e-12);
        assertEquals(1, Plot.niceCeiling(0), "an empty plot still has an axis");
    }

    @Test
    void aPlotWithNothingMeasuredStillWrites() throws Exception {
        Report report = new Report(Collective.ALLREDUCE, 2, ElementType.F32, "cmd", Step.plan(new long[] {8, 1024}, 3, 1),
                List.of(Series.failed("Kolo tcp", "crashed"), Series.skipped("Gloo", "not installed")), List.of(), Map.of());
        Path png = dir.resolve("empty.png");
        new Plot(report).write(png);
        assertEquals(Plot.WIDTH, ImageIO.read(png.toFile()).getWidth());
        new Plot(report).write(dir.resolve("empty.svg"));
        assertTrue(Files.readString(dir.resolve("empty.svg")).contains("<desc>"));
    }

    private static int pixels(BufferedImage image, int rgb) {
        int n = 0;
        for (int x = 0; x < image.getWidth(); x++) {
            for (int y = 0; y < image.getHeight(); y++) {
                if ((image.getRGB(x, y) & 0xffffff) == rgb) {
                    n++;
                }
            }
        }
        return n;
    }

    private static Measurement m(long bytes, double seconds) {
        return new Measurement(bytes, 3, seconds, seconds, seconds, seconds);
    }
}
