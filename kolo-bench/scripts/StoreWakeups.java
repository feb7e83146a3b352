import io.kolo.bootstrap.InMemoryStore;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * What the rendezvous store spends on the requests waiting in a table read: W platform threads wait in one
 * {@code getEach} for W keys, as ranks wait for the address table, while W writes arrive one at a time, a gap apart
 * (ranks starting spread out), so that each write finds all W waiting (a store that woke every waiter on every write
 * made that W² wake-ups; Kolo's wakes each once, when its table is complete). Prints the CPU time beyond the writer's
 * own per waiting request, the time the writes took beyond their gaps, and the resident memory per waiting thread.
 *
 * <p>Run by {@code store-wakeups.sh}: {@code java -cp kolo-core/target/classes StoreWakeups.java WAITERS GAP_MICROS}
 */
public class StoreWakeups {
    public static void main(String[] args) throws Exception {
        int waiters = Integer.parseInt(args[0]);
        long gapNanos = Long.parseLong(args[1]) * 1000;
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        InMemoryStore store = new InMemoryStore();
        long rssBefore = residentBytes();
        CountDownLatch started = new CountDownLatch(waiters);
        CountDownLatch done = new CountDownLatch(waiters);
        for (int i = 0; i < waiters; i++) {
            Thread.ofPlatform().daemon().start(() -> {
                started.countDown();
                store.getEach("addr/", waiters, Duration.ofMinutes(10));
                done.countDown();
            });
        }
        started.await();
        Thread.sleep(500);
        long rssWaiting = residentBytes();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < waiters; i++) {
            store.put("addr/" + i, "10.0.0.1:40000");
            // Spin rather than sleep: a sleeping writer would let the wake-ups hide in its idle time.
            long until = System.nanoTime() + gapNanos;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        }
        done.await();
        long wall = System.nanoTime() - t0;
        long cpu = os.getProcessCpuTime() - cpu0;
        long gaps = waiters * gapNanos;
        System.out.printf("%d waiters, %d writes %d us apart: %.1f us of CPU per waiting request, %.1f us of the"
                        + " writes' time per waiting request, %.0f KiB resident per waiting thread%n", waiters, waiters,
                gapNanos / 1000, Math.max(0, cpu - gaps) / 1e3 / waiters, Math.max(0, wall - gaps) / 1e3 / waiters,
                (rssWaiting - rssBefore) / 1024.0 / waiters);
    }

    private static long residentBytes() throws java.io.IOException {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return -1;
    }
}
