package io.kolo.transport;

import java.lang.foreign.Arena;
import java.time.Duration;

/**
 * What {@link ShmSetup} hands the transport: this rank's inbox file and the mapped files of the host's other ranks
 * (indexed by global rank, null elsewhere), where the ring this rank reads from each peer lies in its own file
 * ({@code ringIn}) and the one it writes to in the peer's ({@code ringOut}), both added on first use
 * ({@link ShmRings}), and which pairs may read each other's memory.
 *
 * @param readsFrom readsFrom[p]: this rank reads large messages from p straight out of p's memory
 * @param readBy    readBy[p]: p reads this rank's memory, so large messages to p carry a header
 */
record ShmLinks(int rank, int size, Duration timeout, Arena arena, ShmFile own, ShmFile[] peerFiles, int[] ringIn,
                int[] ringOut, int hostRanks, CrossMemory cross, boolean[] readsFrom, boolean[] readBy,
                ShmTransport.SingleCopy singleCopy) {
}
