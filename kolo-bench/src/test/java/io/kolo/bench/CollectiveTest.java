package io.kolo.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CollectiveTest {
    @Test
    void busFactorsAreNcclTests() {
        assertEquals(1.0, Collective.ALLREDUCE.busFactor(2));
        assertEquals(1.5, Collective.ALLREDUCE.busFactor(4));
        assertEquals(0.0, Collective.ALLREDUCE.busFactor(1));
        assertEquals(0.75, Collective.ALLGATHER.busFactor(4));
        assertEquals(0.75, Collective.REDUCESCATTER.busFactor(4));
        assertEquals(0.75, Collective.ALLTOALL.busFactor(4));
        assertEquals(1.0, Collective.BROADCAST.busFactor(4));
        assertThrows(IllegalArgumentException.class, () -> Collective.ALLREDUCE.busFactor(0));
    }

    @Test
    void busBandwidthIsBytesOverTimeTimesTheFactor() {
        // 1 MiB in 1 ms at 4 ranks: algbw 1.048576 GB/s, allreduce busbw x 1.5.
        Measurement m = new Measurement(1 << 20, 10, 1e-3, 1e-3, 1e-3, 1e-3);
        assertEquals(1.048576e9, m.algBandwidth(), 1);
        assertEquals(1.572864e9, m.busBandwidth(Collective.ALLREDUCE, 4), 1);
        assertEquals(0.786432e9, m.busBandwidth(Collective.ALLGATHER, 4), 1);
        assertEquals(1.048576e9, m.busBandwidth(Collective.BROADCAST, 4), 1);
    }

    @Test
    void splitCollectivesRoundToWholeElementsPerRank() {
        assertEquals(1024, Collective.ALLREDUCE.effectiveBytes(1024, 4, 3));
        assertEquals(1020, Collective.ALLGATHER.effectiveBytes(1024, 4, 3));
        assertEquals(0, Collective.ALLTOALL.effectiveBytes(8, 4, 3));
        assertEquals(4, Collective.BROADCAST.effectiveBytes(7, 4, 3));
    }

    @Test
    void namesParseCaseInsensitivelyAndErrorsListTheChoices() {
        assertEquals(Collective.REDUCESCATTER, Collective.parse("ReduceScatter"));
        String msg = assertThrows(IllegalArgumentException.class, () -> Collective.parse("allreduse")).getMessage();
        assertTrue(msg.contains("allreduse") && msg.contains("allreduce, allgather, broadcast, alltoall, reducescatter"), msg);
        assertEquals(ElementType.BF16, ElementType.parse("bf16"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ElementType.parse("f8")).getMessage()
                .contains("f32, f64, bf16, f16, i32, i64"));
    }
}
