package io.kolo.transport;

import io.kolo.KoloException;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/** How a rank's data-plane address is written in the job's store ({@code host:port}, IPv6 in brackets) and read back. */
final class DataPlaneAddress {
    private DataPlaneAddress() {
    }

    static String format(InetAddress address, int port) {
        String host = address.getHostAddress();
        return (address instanceof Inet6Address ? "[" + host + "]" : host) + ":" + port;
    }

    /** The address rank {@code peer} published as {@code value}; a value that is not one is named with the key. */
    static InetSocketAddress parse(int peer, String value) {
        int colon = value.lastIndexOf(':');
        try {
            if (colon <= 0) {
                throw new IllegalArgumentException("no port");
            }
            String host = value.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port = Integer.parseInt(value.substring(colon + 1));
            // Published addresses are literals; resolving a name here is only for hand-made stores.
            return new InetSocketAddress(host, port);
        } catch (IllegalArgumentException e) {
            throw new KoloException("rank " + peer + " published an invalid data-plane address 'addr/" + peer
                    + "' = '" + value + "': expected host:port", e);
        }
    }
}
