package io.kolo.view;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The job view's page and its assets, resources of this package inside kolo-core's jar: {@code page.html} and
 * {@code assets/NAME}. The page loads nothing else, so it works where there is no internet.
 */
final class PageAssets {
    /** The page served at {@code /} and frozen into the report file. */
    static final String PAGE = "page.html";

    // Asset names are plain file names: a request's path never reaches outside assets/.
    private static final Pattern ASSET_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

    private PageAssets() {}

    /** The page, as UTF-8 text. */
    static String page() {
        return text(read(PAGE).orElseThrow(() -> new IllegalStateException("kolo-core's jar has no " + PAGE)));
    }

    /**
     * The asset {@code assets/name}, or empty when there is none of that name (or the name is not a plain file
     * name).
     */
    static Optional<byte[]> asset(String name) {
        if (!ASSET_NAME.matcher(name).matches()) {
            return Optional.empty();
        }
        return read("assets/" + name);
    }

    /** The content type to serve {@code assets/name} with. */
    static String contentType(String name) {
        if (name.endsWith(".js")) {
            return "text/javascript; charset=utf-8";
        }
        if (name.endsWith(".css")) {
            return "text/css; charset=utf-8";
        }
        if (name.endsWith(".html")) {
            return "text/html; charset=utf-8";
        }
        return "text/plain; charset=utf-8";
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static Optional<byte[]> read(String resource) {
        try (InputStream in = PageAssets.class.getResourceAsStream(resource)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the job view's " + resource + " from kolo-core's jar", e);
        }
    }
}
