package io.kolo.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SliceGateTest {

    @Test
    void aRankReadsBackTheGateTheHarnessDescribed(@TempDir Path dir) {
        SliceGate gate = SliceGate.fromEnvironment(new SliceGate(dir, 3).variables()).orElseThrow();
        assertEquals(3, gate.slices());
        gate.announce(0, 4096);
        assertEquals(4096, gate.announced(0).orElseThrow());
        assertTrue(gate.announced(1).isEmpty());
    }

    @Test
    void noGateWithoutTheVariableAndABadCountNamesTheVariable(@TempDir Path dir) {
        assertTrue(SliceGate.fromEnvironment(Map.of()).isEmpty());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SliceGate.fromEnvironment(
                Map.of(SliceGate.DIR_VARIABLE, dir.toString(), SliceGate.SLICES_VARIABLE, "two")));
        assertTrue(e.getMessage().contains("KOLO_BENCH_SLICES='two'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SliceGate.fromEnvironment(
                Map.of(SliceGate.DIR_VARIABLE, dir.toString(), SliceGate.SLICES_VARIABLE, "0")));
    }
}
