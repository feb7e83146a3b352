package io.kolo.elastic;

import io.kolo.Kolo;
import io.kolo.RankFailedException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The state's own behaviour, in a job of one rank (the multi-process resets are kolo-launcher's ElasticRunTest). */
class ObjectStateTest {

    @Test
    void restoreGoesBackToTheLastCommitIncludingArraysChangedInPlace() {
        float[] weights = {1, 2};
        ObjectState state = new ObjectState(Map.of("step", 0L, "weights", weights));
        float[] w = state.get("weights");
        w[0] = 10;
        state.set("step", 1L);
        state.commit();
        w[1] = 20;                       // after the commit: lost on restore
        state.set("step", 2L);
        state.restore();
        assertEquals(1L, state.<Long>get("step"));
        assertArrayEquals(new float[]{10, 2}, state.get("weights"));
    }

    @Test
    void outsideAnElasticJobRunReturnsTheBodysResultAndAFailureIsThrownAsUsual() {
        try {
            ObjectState state = new ObjectState(Map.of("n", 3));
            List<Integer> seen = new ArrayList<>();
            int result = Elastic.run(state, s -> {
                seen.add(Kolo.size());
                s.set("n", s.<Integer>get("n") * 2);
                s.commit();
                return s.<Integer>get("n");
            });
            assertEquals(6, result);
            assertEquals(List.of(1), seen);
            RankFailedException lost = new RankFailedException(2, "rank 2 exited with code 137", null);
            assertSame(lost, assertThrows(RankFailedException.class, () -> Elastic.run(state, s -> {
                throw lost;
            })));
        } finally {
            Kolo.shutdown();
        }
    }

    @Test
    void aLostRankIsFoundBehindWrappers() {
        RankFailedException lost = new RankFailedException(1, "rank 1 exited with code 9", null);
        assertSame(lost, Elastic.lostRank(new IllegalStateException("DJL says", new RuntimeException(lost))));
        assertEquals(null, Elastic.lostRank(new IllegalStateException("no")));
    }
}
