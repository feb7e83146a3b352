package io.kolo.launcher.node;

import io.kolo.launcher.job.UsageException;

import io.kolo.bootstrap.Rendezvous;
import io.kolo.bootstrap.RetryDelay;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * {@code --rendezvous HOST[:PORT]} of a per-node launcher: node 0's host, where node 0's {@code kolo run} serves
 * the rendezvous store, and the port (default {@value Rendezvous#DEFAULT_PORT}, as under mpirun).
 */
public record RendezvousEndpoint(String host, int port) {
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);

    static RendezvousEndpoint parse(String spec) {
        String s = spec.strip();
        String host = s;
        String port = null;
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0) {
                throw bad(spec);
            }
            host = s.substring(1, close);
            if (close + 1 < s.length()) {
                if (s.charAt(close + 1) != ':') {
                    throw bad(spec);
                }
                port = s.substring(close + 2);
            }
        } else if (s.indexOf(':') >= 0 && s.indexOf(':') == s.lastIndexOf(':')) {
            host = s.substring(0, s.indexOf(':'));
            port = s.substring(s.indexOf(':') + 1);
        }
        if (host.isEmpty()) {
            throw bad(spec);
        }
        int p = Rendezvous.DEFAULT_PORT;
        if (port != null) {
            try {
                p = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                throw bad(spec);
            }
            if (p < 1 || p > 65535) {
                throw bad(spec);
            }
        }
        return new RendezvousEndpoint(host, p);
    }

    private static UsageException bad(String spec) {
        return new UsageException("--rendezvous " + spec + ": expected HOST or HOST:PORT (node 0's host name and a"
                + " free TCP port there, default " + Rendezvous.DEFAULT_PORT + ")");
    }

    /** Thrown when the name did not resolve before the deadline; the message is the one line to print. */
    static final class Unresolved extends Exception {
        private static final long serialVersionUID = 1L;

        Unresolved(String message) {
            super(message);
        }
    }

    /**
     * Resolves the host, retrying with backoff until {@code timeout}: nodes start in any order, and a Kubernetes
     * pod's DNS name appears only once the pod exists and has an address.
     */
    InetAddress await(Duration timeout) throws Unresolved, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        RetryDelay delay = new RetryDelay(FIRST_BACKOFF, MAX_BACKOFF);
        while (true) {
            try {
                return InetAddress.getByName(host);
            } catch (UnknownHostException e) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new Unresolved("kolo: the rendezvous host " + host + " did not resolve within "
                            + timeout.toSeconds() + " s (--start-timeout): " + e.getMessage() + "; it must name node 0"
                            + " (on Kubernetes: pod 0 of the job, through its headless Service)");
                }
                delay.sleep(deadline);
            }
        }
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
