package io.kolo.launch;

import io.kolo.KoloException;
import io.kolo.bootstrap.RendezvousServer;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * The rendezvous store of one job, served over TCP: where the job's ranks find each other. Start one per job (per
 * attempt of a job) before its ranks join, hand its {@link #address()} and the job's secret to every rank through
 * {@link WorkerEnvironment}, and close it once every rank has joined and left. Every connection must prove the job's
 * secret before the store answers it, so it may listen on a shared network.
 *
 * <pre>{@code
 * JobSecret secret = JobSecret.generate();
 * try (RendezvousService store = RendezvousService.start(InetAddress.getByName(myHost), 0, secret)) {
 *     ... start ranks with WorkerEnvironment.forRank(r, hosts).rendezvous(store.address()).secret(secret).build()
 *     ... wait for them to finish
 * }
 * }</pre>
 *
 * <p>The ranks use the store from joining until they leave (a failing rank records there why it failed, for the
 * others to report), so the process that serves it must outlive them: a driver, or the task of a rank that leaves
 * only after the others (after a barrier).
 */
public final class RendezvousService implements AutoCloseable {
    private final RendezvousServer server;

    private RendezvousService(RendezvousServer server) {
        this.server = server;
    }

    /**
     * Binds to {@code bind} only (the wildcard address only when asked for) and starts serving on a daemon thread.
     *
     * @param port 0 for an ephemeral port (see {@link #address()}), else 1 to 65535
     * @throws IllegalArgumentException when the port is out of range
     * @throws KoloException            naming the address when it cannot be bound
     */
    public static RendezvousService start(InetAddress bind, int port, JobSecret secret) {
        Objects.requireNonNull(bind, "bind");
        Objects.requireNonNull(secret, "secret");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("rendezvous port " + port + " is invalid: expected 0 (any free port)"
                    + " or a TCP port from 1 to 65535");
        }
        return new RendezvousService(RendezvousServer.start(bind, port, secret));
    }

    /** Where the ranks connect: the bound address and the port (the chosen one when started with port 0). */
    public InetSocketAddress address() {
        return server.address();
    }

    /** Stops serving: drops every connection and releases the ranks' waits. Idempotent. */
    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return "RendezvousService[" + address().getAddress().getHostAddress() + ":" + address().getPort() + "]";
    }
}
