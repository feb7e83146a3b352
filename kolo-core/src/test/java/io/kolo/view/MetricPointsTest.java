package io.kolo.view;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ring of a rank's reported points: the newest 256 in order, whole, from any number of threads. */
class MetricPointsTest {
    @Test
    void keepsTheNewestPointsInOrderNumberedFromOne() {
        MetricPoints points = new MetricPoints();
        assertEquals(List.of(), points.newest());
        points.add("loss", 2.5, 0);
        points.add("accuracy", 0.25, -1);
        List<RankSnapshot.Point> two = points.newest();
        assertEquals(2, two.size());
        assertEquals(1, two.get(0).seq());
        assertEquals("loss", two.get(0).name());
        assertEquals(2.5, two.get(0).value());
        assertEquals(0, two.get(0).step());
        assertEquals(-1, two.get(1).step());
        assertTrue(Math.abs(two.get(1).timeMillis() - System.currentTimeMillis()) < 60_000);

        for (int i = 0; i < 1000; i++) {
            points.add("loss", i, i);
        }
        List<RankSnapshot.Point> newest = points.newest();
        assertEquals(RankSnapshot.MAX_POINTS, newest.size());
        assertEquals(1002, newest.getLast().seq());
        assertEquals(999.0, newest.getLast().value());
        for (int i = 1; i < newest.size(); i++) {
            assertEquals(newest.get(i - 1).seq() + 1, newest.get(i).seq());
        }
    }

    @Test
    void aNameIsRequired() {
        MetricPoints points = new MetricPoints();
        assertThrows(IllegalArgumentException.class, () -> points.add(null, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> points.add(" ", 1, 1));
    }

    /** Four threads report while a reader reads: every point read is whole (its value, step and name agree). */
    @Test
    void aReaderNeverSeesAHalfWrittenPoint() throws Exception {
        MetricPoints points = new MetricPoints();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            String name = "w" + w;
            int base = w * 1_000_000;
            writers.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 200_000; i++) {
                    points.add(name, base + i, base + i);
                }
            }));
        }
        Set<Long> seen = new HashSet<>();
        long reads = 0;
        while (writers.stream().anyMatch(Thread::isAlive) || reads == 0) {
            for (RankSnapshot.Point p : points.newest()) {
                assertEquals((long) p.value(), p.step(), "value and step of one point");
                assertEquals("w" + p.step() / 1_000_000, p.name(), "name of one point");
                seen.add(p.seq());
            }
            reads++;
        }
        for (Thread t : writers) {
            t.join();
        }
        assertEquals(800_000, points.lastSeq());
        assertTrue(seen.size() > 0);
    }
}
