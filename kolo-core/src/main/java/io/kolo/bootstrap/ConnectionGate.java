package io.kolo.bootstrap;

import java.io.Closeable;
import java.io.IOException;
import java.net.SocketAddress;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.concurrent.TimeUnit;

/**
 * What a server that accepts connections from the network needs so that strangers cannot stop it: at most
 * {@code maxUnauthenticated} connections may be in their handshake at once (when another arrives, the oldest is
 * dropped: a real peer finishes its handshake in milliseconds, a trickling stranger is the one that waits), accept
 * errors such as running out of file descriptors are waited out with a growing pause instead of ending the server,
 * and rejections are logged with the peer's address at a bounded rate.
 */
public final class ConnectionGate {
    /** Enough for every rank of a large job connecting at once; strangers beyond it push each other out. */
    public static final int DEFAULT_MAX_UNAUTHENTICATED = 256;
    private static final long MIN_PAUSE_MILLIS = 10;
    private static final long MAX_PAUSE_MILLIS = 1000;

    private final String server;
    private final int maxUnauthenticated;
    private final LinkedHashSet<Closeable> unauthenticated = new LinkedHashSet<>();
    private final RateLimitedLog rejections;
    private final RateLimitedLog acceptErrors;
    private long pauseMillis = MIN_PAUSE_MILLIS;

    /** @param server what to call the server in log lines, e.g. "the rendezvous server at 10.0.0.1:29500" */
    public ConnectionGate(String server, int maxUnauthenticated, System.Logger log) {
        this.server = server;
        this.maxUnauthenticated = maxUnauthenticated;
        this.rejections = new RateLimitedLog(log);
        this.acceptErrors = new RateLimitedLog(log);
        // Log lines carry the local time; the time-zone data is a file, read now rather than when descriptors run out.
        java.time.ZoneId.systemDefault();
    }

    /** A new connection starts its handshake; returns the one dropped to make room, already closed, or null. */
    public Closeable arrived(Closeable connection) {
        Closeable dropped = null;
        synchronized (this) {
            pauseMillis = MIN_PAUSE_MILLIS;
            unauthenticated.add(connection);
            if (unauthenticated.size() > maxUnauthenticated) {
                Iterator<Closeable> oldest = unauthenticated.iterator();
                dropped = oldest.next();
                oldest.remove();
            }
        }
        if (dropped != null) {
            closeQuietly(dropped);
            rejections.warn(server + " dropped its oldest unauthenticated connection: more than "
                    + maxUnauthenticated + " connections were in their handshake at once");
        }
        return dropped;
    }

    /** The connection authenticated, or failed and was closed: it no longer counts. */
    public synchronized void settled(Closeable connection) {
        unauthenticated.remove(connection);
    }

    /** How many connections are in their handshake now. */
    public synchronized int unauthenticated() {
        return unauthenticated.size();
    }

    public void rejected(SocketAddress from, String why) {
        rejections.warn(server + " rejected a connection from " + from + ": " + why);
    }

    /**
     * Accepting failed (e.g. "Too many open files"): logs it (rate-limited) and pauses, longer each time in a row, so
     * that connections being dropped and closed can free what accepting needs; the caller then accepts again.
     */
    public void acceptFailed(Exception e) throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(acceptFailedPause(e));
    }

    /**
     * As {@link #acceptFailed}, for a server that must not sleep (one thread serves every connection): returns the
     * pause, in milliseconds, before it accepts again.
     */
    public long acceptFailedPause(Exception e) {
        long pause;
        Closeable oldest = null;
        synchronized (this) {
            pause = pauseMillis;
            pauseMillis = Math.min(MAX_PAUSE_MILLIS, pauseMillis * 2);
            // Out of descriptors, most likely held by connections that never authenticate: give one back.
            Iterator<Closeable> it = unauthenticated.iterator();
            if (it.hasNext()) {
                oldest = it.next();
                it.remove();
            }
        }
        if (oldest != null) {
            closeQuietly(oldest);
        }
        acceptErrors.warn(server + " could not accept a connection (" + e.getMessage() + "); retrying"
                + (oldest == null ? "" : " after dropping its oldest unauthenticated connection"));
        return pause;
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // It is being dropped; nothing more to do with it.
        }
    }
}
