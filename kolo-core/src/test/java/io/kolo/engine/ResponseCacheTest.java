package io.kolo.engine;

import io.kolo.DataType;
import io.kolo.ReduceOp;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The repeated small allreduce marked in the cache goes with any change of its entry. */
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
    void tooLargeOrNotAnAllreduceIsNeverMarked() {
        ResponseCache cache = new ResponseCache(2, LIMIT);
        cache.put(allreduce("big", DataType.FLOAT64, 9));
        cache.markRepeated(cache.position("big"));
        assertEquals(-1, cache.repeated());
        cache.put(new Response(OpKind.BROADCAST, List.of("bc"), DataType.INT8, ReduceOp.SUM, 1, 1, 0,
                new long[][]{{4}}, null, new int[0], null, -1));
        cache.markRepeated(cache.position("bc"));
        assertEquals(-1, cache.repeated());
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
}
