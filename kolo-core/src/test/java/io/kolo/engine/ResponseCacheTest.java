package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The repeated small op marked in the cache goes with any change of its entry. */
class ResponseCacheTest {
    private static final long LIMIT = 64;

    private static Response allreduce(String name, DataType type, long elements) {
        return new Response(OpKind.ALLREDUCE, List.of(name), type, ReduceOp.SUM, 1, 1, 0, new long[][]{{elements}},
                null, new int[0], null, -1);
    }

    @Test
    void aSmallAllreduceStaysMarkedWhileItsEntryStaysSmall() {
        ResponseCache cache = new ResponseCache(4, LIMIT);
        cache.put(allreduce("b", DataType.INT32, 16));
        int p = cache.position("b");
        cache.markRepeated(p);
        assertEquals(p, cache.repeated());
        cache.put(allreduce("b", DataType.INT32, 10));   // a new shape that still fits
        assertEquals(p, cache.repeated());
        cache.put(allreduce("other", DataType.INT32, 1000));
        assertEquals(p, cache.repeated(), "another name's entry does not touch the mark");
    }

    @Test
    void theMarkGoesWhenTheNameGrowsBeyondTheLimit() {
        ResponseCache cache = new ResponseCache(4, LIMIT);
        cache.put(allreduce("b", DataType.INT32, 16));
        cache.markRepeated(cache.position("b"));
        cache.put(allreduce("b", DataType.INT32, 17));   // 68 bytes
        assertEquals(-1, cache.repeated());
        cache.put(allreduce("b", DataType.INT8, 17));
        assertEquals(-1, cache.repeated(), "only a new run from the cache marks it again");
    }

    @Test
    void theMarkGoesWithAnErasedOrEvictedEntry() {
        ResponseCache cache = new ResponseCache(1, LIMIT);
        cache.put(allreduce("b", DataType.FLOAT32, 4));
        cache.markRepeated(0);
        cache.erase(0);
        assertEquals(-1, cache.repeated());
        cache.put(allreduce("b", DataType.FLOAT32, 4));
        cache.markRepeated(0);
        cache.put(allreduce("c", DataType.FLOAT32, 4));  // evicts b from the only position
        assertEquals(-1, cache.repeated(), "a new name at the position is not the repeated op");
    }

    @Test
    void tooLargeOrOfAKindThatCannotRideWithTheVoteIsNeverMarked() {
        ResponseCache cache = new ResponseCache(4, LIMIT);
        cache.put(allreduce("big", DataType.FLOAT64, 9));
        cache.markRepeated(cache.position("big"));
        assertEquals(-1, cache.repeated());
        cache.put(new Response(OpKind.ALLTOALL, List.of("a2a"), DataType.INT8, ReduceOp.SUM, 1, 1, 0,
                new long[][]{{2}}, null, new int[0], null, -1));
        cache.markRepeated(cache.position("a2a"));
        assertEquals(-1, cache.repeated());
        cache.put(new Response(OpKind.ALLREDUCE, List.of("adasum"), DataType.FLOAT32, ReduceOp.ADASUM, 1, 1, 0,
                new long[][]{{2}}, null, new int[0], null, -1));
        cache.markRepeated(cache.position("adasum"));
        assertEquals(-1, cache.repeated());
    }

    @Test
    void aBroadcastOrAllgatherCountsItsWholeResultInWholeWords() {
        ResponseCache cache = new ResponseCache(4, LIMIT);
        // 57 bytes take 64 in the vote: marked.
        cache.put(new Response(OpKind.BROADCAST, List.of("bc"), DataType.INT8, ReduceOp.SUM, 1, 1, 1,
                new long[][]{{57}}, null, new int[0], null, -1));
        cache.markRepeated(cache.position("bc"));
        assertEquals(cache.position("bc"), cache.repeated());
        // 65 bytes take 72.
        cache.put(new Response(OpKind.BROADCAST, List.of("bc"), DataType.INT8, ReduceOp.SUM, 1, 1, 1,
                new long[][]{{65}}, null, new int[0], null, -1));
        assertEquals(-1, cache.repeated());
        // An allgather of rows of 4 floats: 3 + 1 rows are 64 bytes, 3 + 2 are 80, whatever this rank's own rows.
        cache.put(gather(3, 1));
        cache.markRepeated(cache.position("ag"));
        assertEquals(cache.position("ag"), cache.repeated());
        cache.put(gather(3, 2));
        assertEquals(-1, cache.repeated());
    }

    @Test
    void aBroadcastOrAllgatherRidesOnlyUpToItsOwnCapWhateverTheVoteHasRoomFor() {
        ResponseCache cache = new ResponseCache(4, 8192);
        cache.put(new Response(OpKind.BROADCAST, List.of("bc"), DataType.INT8, ReduceOp.SUM, 1, 1, 1,
                new long[][]{{EagerPayload.ORED_MAX_BYTES}}, null, new int[0], null, -1));
        cache.markRepeated(cache.position("bc"));
        assertEquals(cache.position("bc"), cache.repeated());
        cache.put(new Response(OpKind.BROADCAST, List.of("bc"), DataType.INT8, ReduceOp.SUM, 1, 1, 1,
                new long[][]{{EagerPayload.ORED_MAX_BYTES + 1}}, null, new int[0], null, -1));
        assertEquals(-1, cache.repeated());
        cache.put(allreduce("sum", DataType.INT8, 8192));
        cache.markRepeated(cache.position("sum"));
        assertEquals(cache.position("sum"), cache.repeated(), "an allreduce has the whole room");
    }

    private static Response gather(long rows0, long rows1) {
        return new Response(OpKind.ALLGATHER, List.of("ag"), DataType.FLOAT32, ReduceOp.SUM, 1, 1, 0,
                new long[][]{{rows0, 4}}, new long[][]{{rows0}, {rows1}}, new int[0], null, -1);
    }

    @Test
    void anEntryRunAgainFromItsPositionIsTheLastToBeEvicted() {
        ResponseCache cache = new ResponseCache(2, LIMIT);
        cache.put(allreduce("a", DataType.FLOAT32, 2));
        cache.put(allreduce("b", DataType.FLOAT32, 2));
        cache.touch(cache.position("a"));   // the eager op "a" ran again: "b" is now the least recently used
        cache.put(allreduce("c", DataType.FLOAT32, 2));
        assertEquals(-1, cache.position("b"));
        assertEquals(0, cache.position("a"));
        assertEquals(1, cache.position("c"));
    }

    @Test
    void otherThreadsSeeWhichNameIsMarked() {
        ResponseCache cache = new ResponseCache(4, LIMIT);
        cache.put(allreduce("loss", DataType.FLOAT32, 1));
        cache.put(allreduce("acc", DataType.FLOAT32, 1));
        assertFalse(cache.mayBeRepeated("loss"));
        cache.markRepeated(cache.position("loss"));
        assertTrue(cache.mayBeRepeated(new String("loss")));
        assertFalse(cache.mayBeRepeated("acc"));
        cache.markRepeated(cache.position("acc"));
        assertFalse(cache.mayBeRepeated("loss"));
        assertTrue(cache.mayBeRepeated("acc"));
        cache.erase(cache.position("acc"));
        assertFalse(cache.mayBeRepeated("acc"));
    }
}
