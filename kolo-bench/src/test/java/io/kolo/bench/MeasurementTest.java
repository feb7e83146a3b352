package io.kolo.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MeasurementTest {
    @Test
    void statisticsOfPerIterationTimes() {
        long[] nanos = {5000, 1000, 3000, 2000, 0};
        Measurement m = Measurement.of(64, nanos, 4);
        assertEquals(4, m.iterations());
        assertEquals(2750e-9, m.avgSeconds(), 1e-15);
        assertEquals(1000e-9, m.minSeconds(), 1e-15);
        assertEquals(2500e-9, m.medianSeconds(), 1e-15);
        assertEquals(5000e-9, m.maxSeconds(), 1e-15);
        assertEquals(3000e-9, Measurement.of(64, new long[] {3000, 1000, 9000}, 3).medianSeconds(), 1e-15);
        assertThrows(IllegalArgumentException.class, () -> Measurement.of(64, nanos, 0));
    }

    @Test
    void resultLinesRoundTripAndOtherLinesAreIgnored() {
        Measurement m = new Measurement(1 << 20, 17, 123.456e-6, 100e-6, 120e-6, 250.5e-6);
        Measurement back = Measurement.parseLine(m.toLine()).orElseThrow();
        assertEquals(m.bytes(), back.bytes());
        assertEquals(m.iterations(), back.iterations());
        assertEquals(m.avgSeconds(), back.avgSeconds(), 1e-12);
        assertEquals(m.maxSeconds(), back.maxSeconds(), 1e-12);
        assertTrue(Measurement.parseLine("[0]<stdout>:hello").isEmpty());
        assertTrue(Measurement.parseLine("KOLO-BENCH-RESULTS bytes=1").isEmpty());
    }

    @Test
    void malformedResultLinesAreErrorsNamingTheLine() {
        String msg = assertThrows(IllegalArgumentException.class,
                () -> Measurement.parseLine("KOLO-BENCH-RESULT bytes=8 iters=3")).getMessage();
        assertTrue(msg.contains("avg_us"), msg);
        assertThrows(IllegalArgumentException.class, () -> Measurement.parseLine(
                "KOLO-BENCH-RESULT bytes=x iters=3 avg_us=1 min_us=1 median_us=1 max_us=1"));
    }

    @Test
    void stepsScaleIterationsBySizeAndRoundTrip() {
        List<Step> steps = Step.plan(new long[] {8, 1 << 20, 16 << 20, 256 << 20}, -1, -1);
        assertEquals(2000, steps.get(0).iterations());
        assertEquals(512, steps.get(1).iterations());
        assertEquals(32, steps.get(2).iterations());
        assertEquals(5, steps.get(3).iterations());
        assertTrue(steps.get(0).warmup() > steps.get(1).warmup(), "the first size warms the JIT up");
        assertEquals(2, steps.get(3).warmup());
        List<Step> fixed = Step.plan(new long[] {8, 16}, 7, 1);
        assertEquals(List.of(new Step(8, 7, 1), new Step(16, 7, 1)), fixed);
        assertEquals(steps, Step.parse(Step.format(steps)));
        assertThrows(IllegalArgumentException.class, () -> Step.parse("8:1"));
        assertThrows(IllegalArgumentException.class, () -> Step.parse("8:0:1"));
    }
}
