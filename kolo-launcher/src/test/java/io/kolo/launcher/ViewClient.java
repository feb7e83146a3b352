package io.kolo.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the job view's tests read it with: plain HTTP GETs, the report's embedded JSON, a Prometheus text parser. */
public final class ViewClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ViewClient() {
    }

    public record Response(int status, String body) {
    }

    public static Response get(String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        c.setConnectTimeout(10_000);
        c.setReadTimeout(10_000);
        int status = c.getResponseCode();
        try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
            return new Response(status, in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            c.disconnect();
        }
    }

    /** The job's JSON embedded in a report file. */
    public static JsonNode reportJson(Path report) throws IOException {
        String html = Files.readString(report);
        String open = "<script type=\"application/json\" id=\"kolo-job\">";
        int from = html.indexOf(open);
        assertTrue(from >= 0, "no kolo-job element in " + report);
        int to = html.indexOf("</script>", from);
        return JSON.readTree(html.substring(from + open.length(), to));
    }

    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    public record Sample(String name, Map<String, String> labels, double value) {
    }

    /** Parses Prometheus' text exposition 0.0.4; every sample's family must be typed before it. */
    public static List<Sample> parseExposition(String text) {
        List<Sample> samples = new ArrayList<>();
        Set<String> typed = new HashSet<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("# HELP ")) {
                continue;
            }
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                assertEquals(4, parts.length, line);
                assertTrue(Set.of("counter", "gauge", "untyped").contains(parts[3]), line);
                assertTrue(typed.add(parts[2]), "typed twice: " + line);
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            assertTrue(m.matches(), "not a sample line: " + line);
            assertTrue(typed.contains(m.group(1)), "no # TYPE before " + line);
            Map<String, String> labels = new HashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                int at = 0;
                while (l.find() && l.start() == at) {
                    labels.put(l.group(1), l.group(2).replace("\\\"", "\"").replace("\\n", "\n")
                            .replace("\\\\", "\\"));
                    at = l.end();
                }
                assertEquals(m.group(3).length(), at, "bad labels: " + line);
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
        }
        return samples;
    }

}
