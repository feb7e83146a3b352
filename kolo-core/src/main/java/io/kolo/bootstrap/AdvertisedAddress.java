package io.kolo.bootstrap;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The address a rank's data plane binds to and publishes to its peers. Across hosts it must be one the
 * other hosts can route to, so it is never assumed to be loopback: {@code KOLO_IFACE} when set, else the
 * address this host would use to reach the rendezvous server (every host reaches that server, so the
 * same network carries the ranks' traffic), else loopback for a job whose store is on loopback.
 */
public final class AdvertisedAddress {
    private static final System.Logger LOG = LazyLogger.of(AdvertisedAddress.class);
    // Any port will do: connecting a UDP socket only asks the kernel for a route, it sends nothing.
    private static final int ROUTE_PROBE_PORT = 9;

    private AdvertisedAddress() {
    }

    /** The data-plane address of a rank of {@code job} whose rendezvous server is at {@code rendezvous}. */
    public static InetAddress choose(JobEnvironment job, InetAddress rendezvous) {
        if (job.env().containsKey(KoloSettings.IFACE.name())) {
            return job.bindAddress();
        }
        if (rendezvous.isLoopbackAddress() || rendezvous.isAnyLocalAddress()) {
            return InetAddress.getLoopbackAddress();
        }
        InetAddress local = routeTo(rendezvous);
        if (local == null) {
            LOG.log(System.Logger.Level.WARNING, "rank {0}: no route to the rendezvous server {1}; the data"
                    + " plane uses loopback (single-host only; set KOLO_IFACE)", job.rank(),
                    rendezvous.getHostAddress());
            return InetAddress.getLoopbackAddress();
        }
        return local;
    }

    /** {@code KOLO_IFACE}'s meaning for one value: an IP literal, or an interface name's first IPv4 address. */
    public static InetAddress ofInterface(String nameOrAddress) {
        return JobEnvironment.bindAddress(nameOrAddress);
    }

    /**
     * The source address this host uses to reach {@code destination}, from the kernel's routing table; null
     * when there is no route.
     */
    public static InetAddress routeTo(InetAddress destination) {
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(destination, ROUTE_PROBE_PORT));
            InetAddress local = probe.getLocalAddress();
            return local == null || local.isAnyLocalAddress() ? null : local;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
