package io.kolo.engine;

import io.kolo.DataType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The engine's open-addressing table behaves like a map through growth and removals inside probe runs. */
class PendingOpsTest {

    private static Op op(String name) {
        return Op.of(OpKind.ALLREDUCE, name, DataType.FLOAT32, new long[]{1}, MemorySegment.ofArray(new float[1]));
    }

    @Test
    void randomPutsAndRemovesAgreeWithAHashMap() {
        Random random = new Random(42);
        PendingOps table = new PendingOps();
        Map<String, Op> reference = new HashMap<>();
        // Few distinct names relative to the operations, so probe runs collide, wrap and get holes punched in them.
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            names.add("grad." + i);
        }
        for (int step = 0; step < 200_000; step++) {
            String name = names.get(random.nextInt(random.nextBoolean() ? 40 : names.size()));
            switch (random.nextInt(3)) {
                case 0 -> {
                    Op o = op(name);
                    table.put(name, o);
                    reference.put(name, o);
                }
                case 1 -> assertSame(reference.remove(name), table.remove(name), "remove " + name + " at " + step);
                default -> assertSame(reference.get(name), table.get(name), "get " + name + " at " + step);
            }
            assertEquals(reference.isEmpty(), table.isEmpty());
        }
        for (String name : names) {
            assertSame(reference.get(name), table.get(name), name);
            assertEquals(reference.containsKey(name), table.containsKey(name), name);
        }
        assertEquals(new HashSet<>(reference.values()), new HashSet<>(table.values()));
        table.clear();
        assertEquals(true, table.isEmpty());
        assertEquals(null, table.get(names.getFirst()));
    }
}
