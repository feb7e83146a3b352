package io.kolo.examples;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * "Gradient averaging on rank 0: N ms per step of M ms": both from the measured time of the same steps. The step's
 * time came from the mean of the iterations' rates, which a fast iteration pulls up, so with a few iterations of
 * unequal speed N could exceed M.
 */
class SyntheticModeTest {

    @Test
    void averagingPerStepIsAShareOfTheMeasuredStepTime() {
        SyntheticMode m = new SyntheticMode(SyntheticMode.Kind.DISTRIBUTED, null, null, null, false, 2, 2);
        // Two steps of 16 images each: 200 ms, 180 ms of them waiting in averaging for a slower rank; then 20 ms.
        m.account(0, 16, 2, 200_000_000L, 180_000_000L);
        m.account(1, 16, 2, 20_000_000L, 0);
        assertArrayEquals(new double[]{160, 1600}, m.rates, 1e-9, "img/sec of each iteration, as printed");
        assertEquals(45.0, m.averagingMillisPerStep(), 1e-9);
        assertEquals(55.0, m.stepMillis(), 1e-9);
        assertTrue(m.averagingMillisPerStep() <= m.stepMillis());
    }

    /**
     * Kolo's own averaging: per step the shortest of the ranks' averaging times (the rank whose backward ended last
     * waits for nobody), then their mean; which rank is last changes from step to step.
     */
    @Test
    void ownAveragingIsPerStepTheShortestRanksThenTheMean() {
        SyntheticMode m = new SyntheticMode(SyntheticMode.Kind.DISTRIBUTED, null, null, null, false, 1, 3);
        m.recordStep(120_000_000L);
        m.recordStep(10_000_000L);
        m.recordStep(30_000_000L);
        m.recordStep(99_000_000L); // beyond the measured steps: not kept
        assertArrayEquals(new float[]{120, 10, 30}, m.stepAveragingMillis, 1e-6f);
        // Rank 0 then rank 1, as allgather lays them out: rank 1 was last in step 0, rank 0 in steps 1 and 2.
        float[] gathered = {120, 10, 30, 12, 150, 90};
        assertEquals((12 + 10 + 30) / 3.0, SyntheticMode.ownAveragingMillis(gathered, 2), 1e-6);
        assertEquals(0, SyntheticMode.ownAveragingMillis(new float[0], 2));
        assertEquals(160.0 / 3, SyntheticMode.ownAveragingMillis(new float[]{120, 10, 30}, 1), 1e-6);
    }
}
