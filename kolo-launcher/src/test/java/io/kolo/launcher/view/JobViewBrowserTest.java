package io.kolo.launcher.view;

import io.kolo.launcher.Main;
import io.kolo.launcher.workers.SlowRankTraining;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real job in a real browser: {@code kolo run -np 3 --dashboard 0 --report FILE} of a training loop whose rank 2 is
 * slow. The page shows three rows with rank 2 marked as the straggler and a loss chart that grows without a reload;
 * rank 1, killed, turns FAILED with its exit code and cause; the report file then opens offline with the job as it
 * ended. With {@code -Dkolo.view.screenshot=FILE.png} it also saves the page (docs/jobs.md's picture).
 */
@Timeout(240)
class JobViewBrowserTest {
    private static final String CP = System.getProperty("java.class.path");
    private static final Pattern URL = Pattern.compile("(http://[0-9.:\\[\\]a-zA-Z-]+/\\S*)");

    /** What a running kolo run has printed so far, on both streams. */
    private static final class Printed extends ByteArrayOutputStream {
        synchronized String text() {
            return toString(StandardCharsets.UTF_8);
        }
    }

    @Test
    void aSlowRankIsMarkedTheChartsGrowAKilledRankFailsAndTheReportKeepsIt(@TempDir Path dir) throws Exception {
        Path report = dir.resolve("job.html");
        Printed printed = new Printed();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        try (Browser browser = Browser.start()) {
            CompletableFuture<Integer> job = CompletableFuture.supplyAsync(() -> Main.run(new String[] {
                    "run", "-np", "3", "--dashboard", "0", "--report", report.toString(),
                    "-cp", CP, SlowRankTraining.class.getName(), "3000"}, out, out));
            String url = awaitUrl(printed, job);
            browser.open(url);
            browser.await("three rows of ranks", d -> browser.all("#ranks tbody tr[data-rank]").size() == 3);
            browser.script("window.notReloaded = true;");

            browser.await("rank 2 marked as the straggler",
                    d -> browser.all("#ranks tr.straggler").stream().map(r -> r.getAttribute("data-rank")).toList()
                            .equals(List.of("2")));
            assertTrue(browser.one("#ranks tr[data-rank='2'] .straggler-label").isDisplayed());
            assertEquals("RUNNING", browser.one("#job-state").getText());

            String loss = "figure.chart[data-metric='loss']";
            browser.await("a loss chart with points", d -> !browser.all(loss + " canvas").isEmpty()
                    && points(browser, loss) > 3);
            int before = points(browser, loss);
            browser.await("the loss chart grows", d -> points(browser, loss) > before + 3);
            assertTrue(browser.pixelsOfColour(loss + " canvas", "#1a7f37") > 20, "rank 2's loss line is drawn");
            assertFalse(browser.all("figure.chart[data-metric='kolo_collective_share'] canvas").isEmpty(),
                    "time in collectives is charted");
            String shot = System.getProperty("kolo.view.screenshot");
            if (shot != null && !shot.isBlank()) {
                Files.write(Path.of(shot), browser.screenshot());
            }

            long pid = Long.parseLong(browser.one("#ranks tr[data-rank='1'] [data-field='pid']").getText());
            assertTrue(ProcessHandle.of(pid).orElseThrow().destroyForcibly());
            browser.await("rank 1 failed", d -> "FAILED".equals(
                    browser.one("#ranks tr[data-rank='1']").getAttribute("data-state")));
            assertEquals("137", browser.one("#ranks tr[data-rank='1'] [data-field='exitCode']").getText());
            String cause = browser.one("#ranks tr[data-rank='1'] [data-field='cause']").getText();
            assertTrue(cause.contains("SIGKILL") || cause.contains("signal 9"), cause);
            assertTrue(browser.one("#failures li[data-rank='1']").getText().contains("exit code 137"));
            assertEquals(Boolean.TRUE, browser.script("return window.notReloaded === true;"), "no reload");

            assertEquals(137, job.get(60, TimeUnit.SECONDS), printed.text());
            assertTrue(Files.exists(report), "kolo run wrote the report:\n" + printed.text());

            browser.offline();
            browser.open(report.toUri().toString());
            browser.await("the report's three rows", d -> browser.all("#ranks tbody tr[data-rank]").size() == 3);
            assertEquals("FAILED", browser.one("#job-state").getText());
            assertEquals("FAILED", browser.one("#ranks tr[data-rank='1']").getAttribute("data-state"));
            assertEquals("137", browser.one("#ranks tr[data-rank='1'] [data-field='exitCode']").getText());
            assertTrue(points(browser, loss) > 3, "the report keeps the charts");
            assertEquals(List.of(), browser.resourcesLoaded(), "the report loads nothing");
        }
    }

    private static int points(Browser browser, String figure) {
        List<org.openqa.selenium.WebElement> f = browser.all(figure);
        String n = f.isEmpty() ? null : f.getFirst().getAttribute("data-points");
        return n == null ? 0 : Integer.parseInt(n);
    }

    private static String awaitUrl(Printed printed, CompletableFuture<Integer> job) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Matcher m = URL.matcher(printed.text());
            if (m.find()) {
                return m.group(1);
            }
            if (job.isDone()) {
                break;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("kolo run printed no dashboard URL:\n" + printed.text());
    }
}
