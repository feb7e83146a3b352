package io.kolo.transport;

import java.lang.foreign.Arena;
import java.nio.file.Path;

/**
 * For {@link ShmTransportTest}, in a JVM that denies native access: creates and opens an inbox in {@code args[0]} and
 * prints whether its memory is still the mapped segment and what one ring of the bell left in it.
 */
public final class ShmFileWithoutNativeAccess {
    private ShmFileWithoutNativeAccess() {
    }

    public static void main(String[] args) {
        try (Arena arena = Arena.ofShared()) {
            ShmFile f = ShmFile.create(Path.of(args[0]), ShmGroup.newJob(), 0, 2, 4096, arena);
            try {
                ShmFile peer = ShmFile.open(f.path(), 0, 2, 4096, arena, 1);
                peer.ringBell();
                System.out.println("mapped=" + f.bellWord().isMapped() + " bell=" + f.bell());
            } finally {
                f.unlink();
            }
        }
    }
}
