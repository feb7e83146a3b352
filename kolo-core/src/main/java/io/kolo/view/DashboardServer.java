package io.kolo.view;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Serves a {@link JobView} over HTTP: {@code /} the page, {@code /assets/*} what it loads, {@code /api/job} the view as
 * JSON and {@code /metrics} as Prometheus text. Bound to loopback unless told otherwise; bound anywhere else, every
 * request must carry {@code ?token=} with the token made for this server (never the job's secret), which
 * {@link #url()} includes. No CORS headers: a page of another origin cannot read the view.
 */
public final class DashboardServer implements AutoCloseable {
    /**
     * How long {@link #close()} keeps serving an ended view to a page that is open: two of the page's polls (it asks
     * once a second), so that it shows the end rather than a lost connection.
     */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(2);

    private final HttpServer server;
    private final ExecutorService threads;
    private final JobView view;
    private final String token;
    private final String url;
    /** When {@code /api/job} was last asked for (a page is open while it asks every second); 0: never. */
    private volatile long lastJobReadNanos;
    /** Counted down once {@code /api/job} served the view after it ended: a page has seen the end. */
    private final CountDownLatch endSeen = new CountDownLatch(1);

    private DashboardServer(HttpServer server, ExecutorService threads, JobView view, String token, String url) {
        this.server = server;
        this.threads = threads;
        this.view = view;
        this.token = token;
        this.url = url;
    }

    /**
     * Serves {@code view} on {@code bind} (a host name or address of this host; null: 127.0.0.1) and {@code port} (0:
     * a free one).
     *
     * @throws IllegalArgumentException with a one-line message naming the port or address when it cannot be served
     *                                  (out of range, in use, not this host's)
     */
    public static DashboardServer start(JobView view, String bind, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range: give a TCP port from 1 to 65535,"
                    + " or 0 for a free one");
        }
        String host = bind == null || bind.isBlank() ? "127.0.0.1" : bind.strip();
        InetAddress address;
        try {
            address = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cannot serve the job view on " + host + ": unknown host");
        }
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(address, port), 16);
        } catch (BindException e) {
            throw new IllegalArgumentException(port == 0 ? "cannot serve the job view on " + host + ": "
                    + e.getMessage() : "port " + port + " on " + host + " is in use or not this host's ("
                    + e.getMessage() + "): give another port, or 0 for a free one");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot serve the job view on " + host + ":" + port + ": "
                    + e.getMessage());
        }
        // A token only where others can reach the server: on loopback only this host's users can, as with the store.
        String token = address.isLoopbackAddress() ? null : newToken();
        int bound = server.getAddress().getPort();
        String shown = address.isAnyLocalAddress() ? io.kolo.bootstrap.HostName.local().orElse(host) : host;
        String url = "http://" + (shown.indexOf(':') >= 0 ? "[" + shown + "]" : shown) + ":" + bound + "/"
                + (token != null ? "?token=" + token : "");
        ExecutorService threads = Executors.newFixedThreadPool(2, Thread.ofPlatform().daemon()
                .name("kolo-dashboard-", 0).factory());
        DashboardServer dashboard = new DashboardServer(server, threads, view, token, url);
        server.createContext("/", dashboard::handle);
        server.setExecutor(threads);
        server.start();
        return dashboard;
    }

    /** The address to open: the page, with the token when one is needed. */
    public String url() {
        return url;
    }

    /** The port served on (the one picked when 0 was asked for). */
    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * Stops serving. When a page read {@code /api/job} within {@link #CLOSE_GRACE} and has not yet been served the
     * ended view, the server first waits for that read, at most {@link #CLOSE_GRACE}, so the page shows the job's
     * final state; with no page open it stops at once. End the view ({@link JobView#ended}) before.
     */
    @Override
    public void close() {
        long read = lastJobReadNanos;
        if (read != 0 && System.nanoTime() - read < CLOSE_GRACE.toNanos()) {
            try {
                endSeen.await(CLOSE_GRACE.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        server.stop(0);
        threads.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try {
            dispatch(exchange);
        } catch (RuntimeException e) {
            // The server's thread survives a view that fails to render; the client gets a 500, the cause its body.
            send(exchange, 500, "text/plain", "the job view failed: " + e + "\n");
        } finally {
            exchange.close();
        }
    }

    private void dispatch(HttpExchange exchange) throws IOException {
        {
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                send(exchange, 405, "text/plain", "only GET and HEAD\n");
                return;
            }
            if (token != null && !tokenMatches(exchange.getRequestURI().getRawQuery())) {
                send(exchange, 403, "text/plain", "this job view needs the token kolo printed with its URL:"
                        + " add ?token=...\n");
                return;
            }
            String path = exchange.getRequestURI().getPath();
            switch (path) {
                case "/", "/index.html" -> send(exchange, 200, "text/html; charset=utf-8", PageAssets.page());
                case "/api/job" -> {
                    String since = parameter(exchange.getRequestURI().getRawQuery(), "since");
                    long from = -1;
                    if (since != null) {
                        try {
                            from = Long.parseLong(since);
                        } catch (NumberFormatException e) {
                            send(exchange, 400, "text/plain", "since=" + since + " is not a number: give the"
                                    + " metricsCursor of an earlier answer, or leave since out for every point\n");
                            return;
                        }
                    }
                    lastJobReadNanos = System.nanoTime();
                    boolean ended = !view.state().equals(JobView.RUNNING);
                    send(exchange, 200, "application/json", view.json(from));
                    if (ended) {
                        endSeen.countDown();
                    }
                }
                case "/metrics" -> send(exchange, 200, "text/plain; version=0.0.4", view.prometheus());
                default -> {
                    String name = path.startsWith("/assets/") ? path.substring("/assets/".length()) : "";
                    java.util.Optional<byte[]> asset = name.isEmpty() ? java.util.Optional.empty()
                            : PageAssets.asset(name);
                    if (asset.isPresent()) {
                        send(exchange, 200, PageAssets.contentType(name), asset.get());
                    } else {
                        send(exchange, 404, "text/plain", "no such page: " + path + "\n");
                    }
                }
            }
        }
    }

    private boolean tokenMatches(String query) {
        String given = parameter(query, "token");
        // Compared in constant time: the token is all that guards a non-loopback server.
        return given != null && MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8),
                token.getBytes(StandardCharsets.UTF_8));
    }

    /** The first value of query parameter {@code name}, decoded; null when the query has none. */
    private static String parameter(String query, String name) {
        if (query == null) {
            return null;
        }
        for (String part : query.split("&")) {
            if (part.startsWith(name + "=")) {
                return URLDecoder.decode(part.substring(name.length() + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        send(exchange, status, type.startsWith("text/plain") && !type.contains("charset") ? type + "; charset=utf-8"
                : type.equals("application/json") ? "application/json; charset=utf-8" : type,
                body.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : body.length == 0 ? -1 : body.length);
        if (!head && body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private static String newToken() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
