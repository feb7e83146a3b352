package io.kolo.view;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The job's report: one self-contained HTML file, the view's page frozen at the end of the job. Its assets (the
 * chart library, the page's script and style) are inlined and the job's final {@code /api/job} JSON is embedded as
 * {@code <script type="application/json" id="kolo-job">}, which the page renders from instead of polling. It opens
 * from a CI log or a laptop with no network and no launcher.
 */
public final class ReportFile {
    /** Where the page wants the job's JSON when it is frozen into a report. */
    static final String JOB_MARKER = "<!--kolo-job-->";

    private static final Pattern SCRIPT = Pattern.compile("<script src=\"assets/([^\"]+)\"></script>");
    private static final Pattern STYLESHEET = Pattern.compile("<link rel=\"stylesheet\" href=\"assets/([^\"]+)\">");

    private ReportFile() {}

    /**
     * Writes the report to {@code file}, replacing it. The file appears whole or not at all: it is written beside
     * its final name and moved there.
     *
     * @param file where the report goes
     * @param jobJson the job's view as {@code /api/job} serves it
     * @throws IOException when the file cannot be written
     */
    public static void write(Path file, String jobJson) throws IOException {
        Path target = file.toAbsolutePath();
        Path partial = target.resolveSibling("." + target.getFileName() + ".partial");
        Files.writeString(partial, html(jobJson), StandardCharsets.UTF_8);
        try {
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /** The report's text: the page with its assets inlined and {@code jobJson} embedded. */
    static String html(String jobJson) {
        String page = PageAssets.page();
        int marker = page.indexOf(JOB_MARKER);
        if (marker < 0) {
            throw new IllegalStateException(PageAssets.PAGE + " has no " + JOB_MARKER + " for the job's JSON");
        }
        String embedded = "<script type=\"application/json\" id=\"kolo-job\">" + escapeJson(jobJson) + "</script>";
        page = page.substring(0, marker) + embedded + page.substring(marker + JOB_MARKER.length());
        page = inline(page, SCRIPT, "script");
        return inline(page, STYLESHEET, "style");
    }

    /**
     * JSON inside a script element must not close it ({@code </script>}) nor open a comment that changes how the
     * element ends ({@code <!--}). Both can only occur inside JSON strings, where {@code <\/} reads back as
     * {@code </}, and a {@code <} written as JSON's unicode escape as {@code <}.
     */
    static String escapeJson(String json) {
        return json.replace("<!--", "\\u003c!--").replace("</", "<\\/");
    }

    private static String inline(String page, Pattern reference, String element) {
        Matcher m = reference.matcher(page);
        StringBuilder out = new StringBuilder(page.length());
        while (m.find()) {
            String name = m.group(1);
            String text = PageAssets.text(PageAssets.asset(name)
                    .orElseThrow(() -> new IllegalStateException("the job view's page refers to assets/" + name
                            + ", which kolo-core's jar does not hold")));
            // Inside a string or a regular expression "<\/" means "</"; the minified library holds neither.
            text = text.replace("</" + element, "<\\/" + element);
            m.appendReplacement(out, Matcher.quoteReplacement("<" + element + ">" + text + "</" + element + ">"));
        }
        m.appendTail(out);
        return out.toString();
    }
}
