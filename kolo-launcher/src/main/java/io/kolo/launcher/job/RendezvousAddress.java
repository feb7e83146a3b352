package io.kolo.launcher.job;


import io.kolo.bootstrap.AdvertisedAddress;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Where the launcher's rendezvous server listens and the address each host's ranks dial. Never loopback
 * across hosts: with {@code --network-interface}/{@code KOLO_IFACE} that interface's address; otherwise the
 * address each host saw the launcher's ssh connection come from (an address it can route back to, checked
 * to be one of this machine's), or the source address of the route to that host.
 *
 * @param bind    the server's address, the wildcard when hosts reach the launcher by different addresses
 * @param perHost the address a remote host's ranks dial
 * @param local   the address ranks on the launcher's own host dial
 */
record RendezvousAddress(InetAddress bind, Map<String, InetAddress> perHost, InetAddress local) {

    InetAddress forHost(String host) {
        return perHost.getOrDefault(host, local);
    }

    static RendezvousAddress choose(String networkInterface, Map<String, Preflight.Reachable> remote) {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        if (networkInterface != null) {
            InetAddress a = AdvertisedAddress.ofInterface(networkInterface);
            return new RendezvousAddress(a, Map.of(), a);
        }
        if (remote.isEmpty()) {
            return new RendezvousAddress(loopback, Map.of(), loopback);
        }
        Map<String, InetAddress> perHost = new LinkedHashMap<>();
        for (Preflight.Reachable r : remote.values()) {
            InetAddress seen = ownAddress(r.launcherAddress());
            if (seen == null) {
                // Behind a jump host or NAT the host saw someone else; ask the routing table instead.
                try {
                    seen = AdvertisedAddress.routeTo(InetAddress.getByName(r.host()));
                } catch (UnknownHostException e) {
                    seen = null;
                }
            }
            if (seen == null) {
                throw new IllegalArgumentException("cannot tell which of this machine's addresses host " + r.host()
                        + " can reach (it saw the launcher as " + r.launcherAddress() + "); give"
                        + " --network-interface");
            }
            perHost.put(r.host(), seen);
        }
        Set<InetAddress> distinct = new LinkedHashSet<>(perHost.values());
        if (distinct.size() == 1) {
            InetAddress only = distinct.iterator().next();
            return new RendezvousAddress(only, perHost, only);
        }
        // Hosts on different networks: listen on all of them (every connection still proves the job secret).
        return new RendezvousAddress(InetAddress.ofLiteral("0.0.0.0"), perHost, loopback);
    }

    /**
     * For ranks started through an rsh agent: host names are opaque (not resolved, and no ssh connection says which
     * address a host sees), so the server listens on the interface given, else on every address; each rank's agent
     * learns the address that reaches it when it fetches its settings ({@code AgentOffice}).
     */
    static RendezvousAddress forAgents(String networkInterface) {
        if (networkInterface != null) {
            InetAddress a = AdvertisedAddress.ofInterface(networkInterface);
            return new RendezvousAddress(a, Map.of(), a);
        }
        return new RendezvousAddress(InetAddress.ofLiteral("0.0.0.0"), Map.of(), InetAddress.getLoopbackAddress());
    }

    /** The address if it is one of this machine's, else null. */
    private static InetAddress ownAddress(String literal) {
        try {
            InetAddress a = InetAddress.ofLiteral(literal);
            return NetworkInterface.getByInetAddress(a) != null ? a : null;
        } catch (IllegalArgumentException | SocketException e) {
            return null;
        }
    }
}
