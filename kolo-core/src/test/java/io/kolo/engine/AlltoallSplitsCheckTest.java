package io.kolo.engine;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What a rank says about its own alltoall splits, which every rank of the op then reports. */
class AlltoallSplitsCheckTest {

    @Test
    void eachProblemIsNamedWithTheSplits() {
        assertNull(AlltoallSplits.problem(new long[]{0, 3, 1}, 4, 3));
        assertEquals("gave no splits for 3 ranks", AlltoallSplits.problem(null, 4, 3));
        assertEquals("gave 2 splits for 3 ranks", AlltoallSplits.problem(new long[]{2, 2}, 4, 3));
        assertEquals("gave a negative split [5, -1, 0]", AlltoallSplits.problem(new long[]{5, -1, 0}, 4, 3));
        assertEquals("gave splits [1, 1, 1] summing to 3 for a first dimension of 4",
                AlltoallSplits.problem(new long[]{1, 1, 1}, 4, 3));
        assertEquals("gave splits [9223372036854775807, 2, 0] summing to more than 9223372036854775807 rows",
                AlltoallSplits.problem(new long[]{Long.MAX_VALUE, 2, 0}, 1, 3));
    }

    @Test
    void aLargeJobsSplitsAreCutAndANegativeOneIsPointedAt() {
        long[] splits = new long[1024];
        Arrays.fill(splits, 1);
        splits[700] = -2;
        assertEquals("gave a negative split [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ... 1008 more]"
                + " (-2 for set rank 700)", AlltoallSplits.problem(splits, 1024, 1024));
        splits[700] = 1;
        assertEquals("gave splits [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ... 1008 more] summing to 1024"
                + " for a first dimension of 1000", AlltoallSplits.problem(splits, 1000, 1024));
    }
}
