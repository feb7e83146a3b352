package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class AdvertisedAddressTest {
    private static final String SECRET = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    private static JobEnvironment job(String... extra) {
        Map<String, String> env = new java.util.HashMap<>(Map.of("KOLO_RANK", "1", "KOLO_SIZE", "2",
                "KOLO_RENDEZVOUS_PORT", "29500", "KOLO_SECRET", SECRET));
        for (int i = 0; i < extra.length; i += 2) {
            env.put(extra[i], extra[i + 1]);
        }
        return JobEnvironment.from(env);
    }

    @Test
    void kolo_ifaceWinsOverEverything() {
        assertEquals(InetAddress.ofLiteral("127.0.0.1"),
                AdvertisedAddress.choose(job("KOLO_IFACE", "127.0.0.1"), InetAddress.ofLiteral("10.1.2.3")));
    }

    @Test
    void aStoreOnLoopbackMeansOneHost() {
        assertEquals(InetAddress.getLoopbackAddress(),
                AdvertisedAddress.choose(job(), InetAddress.ofLiteral("127.0.0.1")));
    }

    @Test
    void otherwiseTheAddressThisHostReachesTheStoreFrom() throws Exception {
        // This host's own non-loopback IPv4 address: the route to it leaves from it, so the rank publishes it.
        Optional<InetAddress> own = NetworkInterface.networkInterfaces()
                .filter(n -> {
                    try {
                        return n.isUp() && !n.isLoopback();
                    } catch (java.net.SocketException e) {
                        return false;
                    }
                })
                .flatMap(NetworkInterface::inetAddresses).filter(a -> a instanceof Inet4Address).findFirst();
        assumeTrue(own.isPresent(), "skipped: this machine has no non-loopback IPv4 address");
        assertEquals(own.get(), AdvertisedAddress.choose(job(), own.get()));
        assertEquals(own.get(), AdvertisedAddress.routeTo(own.get()));
    }
}
