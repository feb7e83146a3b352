package io.kolo.transport;

import io.kolo.bootstrap.RendezvousClient;
import io.kolo.launch.JobSecret;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.stream.IntStream;

/**
 * Rank 1 of a shared-memory job of {@code args[4]} ranks (two when absent) in its own process, for
 * {@link ShmTransportTest}: connects through the rendezvous store at {@code args[0]:args[1]} (secret from
 * {@code KOLO_SECRET}), sends {@code args[3]} bytes of 7s to rank 0, prints "sent", then sleeps until killed: it holds
 * rank 0 mid-message.
 */
public final class ShmPeerProcess {
    private ShmPeerProcess() {
    }

    public static void main(String[] args) throws Exception {
        JobSecret secret = JobSecret.fromHex(System.getenv("KOLO_SECRET"));
        try (RendezvousClient store = RendezvousClient.connect(
                new InetSocketAddress(args[0], Integer.parseInt(args[1])), secret, Duration.ofSeconds(20))) {
            int size = args.length > 4 ? Integer.parseInt(args[4]) : 2;
            ShmTransport t = ShmTransport.connect(1, size, IntStream.range(0, size).toArray(), store,
                    args[2], 65536, Duration.ofSeconds(20), Duration.ofSeconds(60));
            long bytes = Long.parseLong(args[3]);
            MemorySegment src = Arena.global().allocate(bytes);
            src.fill((byte) 7);
            t.send(0, src, 0, bytes);
            System.out.println("sent");
            System.out.flush();
            Thread.sleep(600_000);
        }
    }
}
