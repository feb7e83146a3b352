package io.kolo.bench;

import java.util.Locale;

/**
 * One rank of {@code kolo bench scale} as a process of its own: joins the job its environment describes, and prints
 * one line of its times and of what joining cost it (descriptors, memory) for the benchmark to read.
 */
public final class ScaleWorker {
    static final String PREFIX = "kolo-scale-rank";

    private ScaleWorker() {
    }

    public static void main(String[] args) throws Exception {
        ProcessResources.Sample before = ProcessResources.sample();
        ProcessResources.Sample[] after = new ProcessResources.Sample[1];
        ScaleRank.Times t;
        try {
            t = ScaleRank.run(System.getenv(), () -> after[0] = ProcessResources.sample());
        } catch (Exception e) {
            System.err.println("kolo bench scale: rank " + System.getenv("KOLO_RANK") + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        ProcessResources.Sample d = after[0].minus(before);
        System.out.println(String.format(Locale.ROOT, "%s %.3f %.3f %.3f %.3f %d %d %d %d %d %d", PREFIX,
                t.initMs(), t.firstOpMs(), t.smallUs(), t.largeUs(), d.fds(), d.socketFds(), d.rssBytes(),
                d.heapBytes(), d.shmBytes(), after[0].rssBytes()));
        System.out.flush();
    }
}
