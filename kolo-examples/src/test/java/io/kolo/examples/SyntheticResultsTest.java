package io.kolo.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The synthetic example's --json file: valid JSON, figures rounded as printed, and why DDP did not run. */
class SyntheticResultsTest {
    @Test
    void theJsonFileHoldsKolosFiguresAndWhyDdpWasSkipped(@TempDir Path dir) throws Exception {
        SyntheticResults results = new SyntheticResults("resnet18", 32, 2, 1, 11_681_832, List.of("[3, 3]"),
                new SyntheticResults.KoloFigures(18.75678, 37.51234, 10.38, 25.809, 20.962, 340.987, 34.1234, 1706.049,
                        new double[]{0.7, 0.8, 0.9}),
                SyntheticResults.DdpFigures.skipped("no \"python3\"\tthere"));
        Path file = dir.resolve("r.json");
        results.writeJson(file);
        JsonNode j = new JsonMapper().readTree(file.toFile());
        assertEquals("resnet18", j.path("model").asText());
        assertEquals(11_681_832, j.path("parameters").asLong());
        assertEquals(25.809, j.path("kolo").path("np1_img_sec").asDouble());
        assertEquals(37.512, j.path("kolo").path("total_img_sec").asDouble());
        assertEquals(0.7267, j.path("kolo").path("scaling_efficiency").asDouble());
        assertEquals(340.99, j.path("kolo").path("averaging_ms").asDouble());
        assertEquals(34.12, j.path("kolo").path("averaging_own_ms").asDouble());
        assertEquals(0.02, j.path("kolo").path("averaging_own_share").asDouble());
        assertEquals(0.8, j.path("kolo").path("median_iteration_efficiency").asDouble());
        assertEquals(0.8122, j.path("ceiling").path("scaling_efficiency").asDouble());
        assertEquals("no \"python3\"\tthere", j.path("ddp").path("skipped").asText());
    }
}
