import io.kolo.bootstrap.RendezvousClient;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.launch.JobSecret;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The rendezvous store's side of an n-rank start, alone: n platform threads (ranks as threads of one JVM) connect to
 * one {@link RendezvousServer} over loopback at once, each writes its address and reads the whole table, as a rank's
 * start does. Prints the time from the first connect to the last complete table, the ranks that failed, the store's
 * requests, and the JVM's peak thread count.
 *
 * <p>Run by {@code store-start.sh}: {@code java -cp kolo-core/target/classes StoreStart.java RANKS}
 */
public class StoreStart {
    public static void main(String[] args) throws Exception {
        int ranks = Integer.parseInt(args[0]);
        JobSecret secret = JobSecret.generate();
        Duration wait = Duration.ofSeconds(120);
        try (RendezvousServer server = RendezvousServer.start(InetAddress.getLoopbackAddress(), 0, secret)) {
            CountDownLatch go = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(ranks);
            AtomicInteger failed = new AtomicInteger();
            String[] error = new String[1];
            for (int r = 0; r < ranks; r++) {
                int rank = r;
                Thread.ofPlatform().daemon().start(() -> {
                    try {
                        go.await();
                        try (RendezvousClient c = RendezvousClient.connect(server.address(), secret, wait)) {
                            c.put("addr/" + rank, "127.0.0.1:" + (20000 + rank));
                            List<String> table = c.getEach("addr/", ranks, wait);
                            if (table.size() != ranks) {
                                throw new IllegalStateException("a table of " + table.size());
                            }
                        }
                    } catch (Exception | Error e) {
                        if (failed.getAndIncrement() == 0) {
                            error[0] = e.toString();
                        }
                    } finally {
                        done.countDown();
                    }
                });
            }
            long t0 = System.nanoTime();
            go.countDown();
            done.await();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("%d ranks: every table read in %d ms, %d ranks failed%s, %d store requests, peak %d threads%n",
                    ranks, ms, failed.get(), error[0] == null ? "" : " (first: " + error[0] + ")", server.requests(),
                    ManagementFactory.getThreadMXBean().getPeakThreadCount());
        }
    }
}
