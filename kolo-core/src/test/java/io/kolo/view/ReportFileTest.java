package io.kolo.view;

import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report file is one HTML file that needs nothing else: its assets inlined, the job's JSON embedded intact. */
class ReportFileTest {
    private static final Pattern EMBEDDED =
            Pattern.compile("<script type=\"application/json\" id=\"kolo-job\">(.*?)</script>", Pattern.DOTALL);

    @TempDir
    Path dir;

    @Test
    void theReportEmbedsTheJobAndInlinesEveryAsset() throws IOException {
        String json = "{\"state\":\"SUCCEEDED\",\"size\":2,\"ranks\":[]}";
        Path file = dir.resolve("report.html");
        ReportFile.write(file, json);

        String html = Files.readString(file);
        Matcher m = EMBEDDED.matcher(html);
        assertTrue(m.find(), "the job's JSON is embedded");
        assertEquals(json, m.group(1));
        assertFalse(html.contains("src=\"assets/"), "no script is loaded from beside the file");
        assertFalse(html.contains("href=\"assets/"), "no style sheet is loaded from beside the file");
        assertFalse(html.matches("(?s).*(src|href)=\"(https?:)?//.*"), "nothing is loaded from the network");
        assertTrue(html.contains(new String(PageAssets.asset("uPlot.iife.min.js").orElseThrow())),
                "the chart library is inlined whole");
        assertTrue(html.contains(new String(PageAssets.asset("view.js").orElseThrow())), "the page's script too");
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no partial file is left beside the report");
        }
    }

    @Test
    void textThatWouldEndTheScriptElementReadsBackUnchanged() throws IOException {
        String nasty = "</script><script>alert(1)</script><!-- <script>";
        String json = JsonMapper.builder().build().writeValueAsString(Map.of("state", "FAILED", "cause", nasty));
        Path file = dir.resolve("report.html");
        ReportFile.write(file, json);

        String html = Files.readString(file);
        Matcher m = EMBEDDED.matcher(html);
        assertTrue(m.find());
        assertFalse(m.group(1).contains("</"), "the embedded JSON cannot close its element");
        assertFalse(m.group(1).contains("<!--"), "nor open a comment");
        Map<?, ?> back = JsonMapper.builder().build().readValue(m.group(1), Map.class);
        assertEquals(nasty, back.get("cause"));
    }

    @Test
    void aReportReplacesAnOlderOne() throws IOException {
        Path file = dir.resolve("report.html");
        ReportFile.write(file, "{\"state\":\"RUNNING\"}");
        ReportFile.write(file, "{\"state\":\"SUCCEEDED\"}");
        assertTrue(Files.readString(file).contains("{\"state\":\"SUCCEEDED\"}"));
    }

    @Test
    void anUnwritablePlaceIsAnIoError() {
        Path file = dir.resolve("no-such-dir").resolve("report.html");
        assertThrows(IOException.class, () -> ReportFile.write(file, "{}"));
    }

    @Test
    void assetNamesCannotLeaveTheAssetsFolder() {
        assertTrue(PageAssets.asset("view.js").isPresent());
        assertFalse(PageAssets.asset("../page.html").isPresent());
        assertFalse(PageAssets.asset("").isPresent());
        assertFalse(PageAssets.asset("missing.js").isPresent());
    }
}
