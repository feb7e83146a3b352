package io.kolo.launcher.view;

import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A headless Debian {@code chromium} driven by its {@code chromedriver}, for the job view's tests. Where either is
 * missing, the test is skipped and says why ({@code apt-get install chromium chromium-driver}).
 */
final class Browser implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ChromeDriver driver;
    private final Path profile;

    private Browser(ChromeDriver driver, Path profile) {
        this.driver = driver;
        this.profile = profile;
    }

    /** Starts the browser, or skips the calling test (with the reason printed) when it is not installed. */
    static Browser start() throws IOException {
        Optional<String> missing = missing();
        if (missing.isPresent()) {
            System.out.println("Skipped: " + missing.get());
        }
        assumeTrue(missing.isEmpty(), () -> missing.orElse(""));
        Path profile = Files.createTempDirectory("kolo-view-chromium");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(executable("chromium").orElseThrow().toString());
        // No sandbox: tests may run as root in a container. No first-run, sync or update traffic: nothing reaches out.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--user-data-dir=" + profile, "--no-first-run",
                "--disable-background-networking", "--disable-sync", "--disable-component-update");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(executable("chromedriver").orElseThrow().toFile())
                .usingAnyFreePort()
                .build();
        return new Browser(new ChromeDriver(service, options), profile);
    }

    /** Why the browser cannot run here, if it cannot. */
    static Optional<String> missing() {
        if (executable("chromium").isEmpty()) {
            return Optional.of("no chromium on this machine (apt-get install chromium chromium-driver)");
        }
        if (executable("chromedriver").isEmpty()) {
            return Optional.of("no chromedriver on this machine (apt-get install chromium-driver)");
        }
        return Optional.empty();
    }

    private static Optional<Path> executable(String name) {
        String path = System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/bin";
        return Stream.of(path.split(File.pathSeparator)).filter(d -> !d.isEmpty()).map(d -> Path.of(d, name))
                .filter(Files::isExecutable).findFirst();
    }

    WebDriver driver() {
        return driver;
    }

    void open(String url) {
        driver.get(url);
    }

    /** Cuts the page off the network, as a laptop on a plane: only what the page itself holds can load. */
    void offline() {
        driver.executeCdpCommand("Network.enable", Map.of());
        driver.executeCdpCommand("Network.emulateNetworkConditions", Map.of("offline", true, "latency", 0,
                "downloadThroughput", -1, "uploadThroughput", -1));
    }

    <T> T await(String what, Function<WebDriver, T> condition) {
        return new WebDriverWait(driver, WAIT).withMessage(what).until(condition);
    }

    List<WebElement> all(String css) {
        return driver.findElements(By.cssSelector(css));
    }

    WebElement one(String css) {
        return driver.findElement(By.cssSelector(css));
    }

    Object script(String js, Object... args) {
        return ((JavascriptExecutor) driver).executeScript(js, args);
    }

    /** Pixels of the canvas under {@code css} within a small distance of the colour {@code #rrggbb}. */
    long pixelsOfColour(String css, String colour) {
        int rgb = Integer.parseInt(colour.substring(1), 16);
        Object n = script("""
                const c = document.querySelector(arguments[0]);
                if (!c) return -1;
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let n = 0;
                for (let i = 0; i < d.length; i += 4) {
                  if (d[i + 3] > 200 && Math.abs(d[i] - arguments[1]) + Math.abs(d[i + 1] - arguments[2])
                      + Math.abs(d[i + 2] - arguments[3]) < 60) n++;
                }
                return n;""", css, rgb >> 16, (rgb >> 8) & 0xff, rgb & 0xff);
        return ((Number) n).longValue();
    }

    /** Every resource the page loaded from anywhere after the document itself (scripts, styles, fetches). */
    @SuppressWarnings("unchecked")
    List<String> resourcesLoaded() {
        return (List<String>) script("return performance.getEntriesByType('resource').map(e => e.name);");
    }

    /** A picture of the whole page: the window grows to the page's height first, and the charts fit it again. */
    byte[] screenshot() throws InterruptedException {
        org.openqa.selenium.Dimension before = driver.manage().window().getSize();
        long height = ((Number) script("return document.documentElement.scrollHeight;")).longValue();
        driver.manage().window().setSize(new org.openqa.selenium.Dimension(before.getWidth(),
                (int) Math.min(4000, height + 120)));
        Thread.sleep(1500);
        try {
            return driver.getScreenshotAs(org.openqa.selenium.OutputType.BYTES);
        } finally {
            driver.manage().window().setSize(before);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            driver.quit();
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
