package io.kolo.transport;

import java.lang.foreign.MemorySegment;

/**
 * Point-to-point byte movement between the ranks of one job. Algorithms are written against this
 * interface only; they never know whether bytes travel over TCP, shared memory or inside one JVM.
 *
 * <p>A rank's methods are called by one thread at a time: the engine's background thread, or a caller that drives
 * the engine's cycles while it waits for its op (the engine's cycle lock orders them), so implementations need no
 * internal locking for concurrent callers, but must not assume one fixed thread. Messages between a pair of ranks
 * arrive in the order they were sent, and each receive takes exactly one send's bytes: callers pair every send with
 * a receive of the same length, as MPI does (shared memory relies on it to read a large message straight from the
 * sender's memory). Every blocking call gives up after the transport's timeout with
 * a {@link io.kolo.KoloTimeoutException} naming the peer (a {@link PeerTimeoutException} where the transport knows
 * which peer it waited on), and fails with a
 * {@link PeerFailedException} when the peer is gone.
 *
 * <p>Segments passed in may be heap or native; implementations must not allocate per call in steady
 * state (cache views of the last segment used, for example).
 */
public interface Transport extends AutoCloseable {

    /** This rank, 0 &lt;= rank &lt; size. */
    int rank();

    /** Number of ranks in the job. */
    int size();

    /** Sends {@code length} bytes of {@code src} from {@code offset}; returns when {@code src} may be reused. */
    void send(int peer, MemorySegment src, long offset, long length);

    /** Receives exactly {@code length} bytes from {@code peer} into {@code dst} at {@code offset}. */
    void recv(int peer, MemorySegment dst, long offset, long length);

    /**
     * Sends to one peer while receiving from another (possibly the same one), without either side
     * waiting for the other to drain first: the building block of ring steps, which would deadlock
     * with a blocking send followed by a blocking receive once messages outgrow socket buffers.
     */
    void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                  int recvPeer, MemorySegment dst, long dstOffset, long dstLength);

    /**
     * A {@link #sendRecv} whose received bytes are combined into {@code acc} instead of stored: the reduce-scatter
     * step of a ring. Pieces handed to the combiner are whole multiples of {@code unitBytes} (an element). The
     * default receives into {@code scratch} (at least {@code length} bytes) and combines once; a transport that
     * can read received bytes in place (shared memory) combines them straight from there and skips a copy.
     */
    default void sendRecvCombine(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                                 int recvPeer, MemorySegment acc, long accOffset, long length, int unitBytes,
                                 MemorySegment scratch, Combiner combiner) {
        sendRecv(sendPeer, src, srcOffset, srcLength, recvPeer, scratch, 0, length);
        if (length > 0) {
            combiner.combine(acc, accOffset, scratch, 0, length);
        }
    }

    /**
     * The peer this rank's exchange in progress has waited on without anything moving (its bytes not coming, or not
     * taken), or null when no exchange is stuck or the transport does not tell: for the message of a wait that ran
     * out elsewhere (a caller's), so any thread may ask. Transports keep what it needs in plain fields while they
     * wait and make the answer only when asked.
     */
    default PeerWait stalledOn() {
        return null;
    }

    /**
     * Fails every blocked and later call with {@code cause} and releases the connections, so that
     * peers blocked on this rank notice quickly. Idempotent.
     */
    void abort(RuntimeException cause);

    /** Closes every connection; later calls fail. Idempotent. */
    @Override
    void close();
}
