package io.kolo.examples;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The figures the README's first command prints: the start and the steady state apart. */
class AllreduceExampleTest {

    @Test
    void theFirstOpTheRestOfTheStartAndTheSteadyStateAreReportedApart() {
        long[] nanos = new long[60];
        Arrays.fill(nanos, 2_000_000);
        nanos[0] = 100_000_000;
        Arrays.fill(nanos, 1, 10, 10_000_000);
        // 4 MiB at 2 ranks: each rank moves the whole message once, 4194304 bytes in 2 ms.
        assertEquals("first op 100.0 ms, ops 2-10 10.0 ms avg; steady state (ops 11-60) 2.00 ms avg,"
                + " bus bandwidth 2.10 GB/s", AllreduceExample.timings(nanos, 4 << 20, 2));
    }

    @Test
    void withTenOpsOrFewerItSaysHowToSeeTheSteadyState() {
        assertEquals("first op 5.0 ms, ops 2-3 1.5 ms avg (more than 10 --iterations for the steady state)",
                AllreduceExample.timings(new long[] {5_000_000, 1_000_000, 2_000_000}, 1024, 2));
        assertEquals("first op 5.0 ms (more than 10 --iterations for the steady state)",
                AllreduceExample.timings(new long[] {5_000_000}, 1024, 2));
    }

    @Test
    void oneRankHasNoBusBandwidth() {
        long[] nanos = new long[11];
        Arrays.fill(nanos, 1_000_000);
        assertEquals("first op 1.0 ms, ops 2-10 1.0 ms avg; steady state (ops 11-11) 1.00 ms avg",
                AllreduceExample.timings(nanos, 1024, 1));
    }
}
