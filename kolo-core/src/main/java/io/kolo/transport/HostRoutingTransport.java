package io.kolo.transport;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Sends each peer's bytes through shared memory when the peer is on this host and through TCP otherwise.
 *
 * <p>A {@link #sendRecv} whose two peers use different transports must move both directions at once (a ring step
 * across a host boundary): the send runs on a helper thread ({@link SendWorker}) while this thread receives. Every
 * other call goes straight to one transport.
 */
public final class HostRoutingTransport implements Transport {
    private final ShmTransport shm;
    private final Transport remote;
    private SendWorker worker;

    /** {@code remote} carries the peers {@code shm} does not reach; both belong to the same rank of the same job. */
    public HostRoutingTransport(ShmTransport shm, Transport remote) {
        this.shm = Objects.requireNonNull(shm, "shm");
        this.remote = Objects.requireNonNull(remote, "remote");
        if (shm.rank() != remote.rank() || shm.size() != remote.size()) {
            throw new IllegalArgumentException("transports disagree: " + shm + " vs " + remote);
        }
    }

    private Transport route(int peer) {
        return shm.reaches(peer) ? shm : remote;
    }

    @Override
    public int rank() {
        return shm.rank();
    }

    @Override
    public int size() {
        return shm.size();
    }

    @Override
    public void send(int peer, MemorySegment src, long offset, long length) {
        route(peer).send(peer, src, offset, length);
    }

    @Override
    public void recv(int peer, MemorySegment dst, long offset, long length) {
        route(peer).recv(peer, dst, offset, length);
    }

    @Override
    public void sendRecvCombine(int sendPeer, MemorySegment src, long srcOffset, long srcLength, int recvPeer,
                                MemorySegment acc, long accOffset, long length, int unitBytes, MemorySegment scratch,
                                Combiner combiner) {
        Transport out = route(sendPeer);
        if (out == route(recvPeer)) {
            out.sendRecvCombine(sendPeer, src, srcOffset, srcLength, recvPeer, acc, accOffset, length, unitBytes,
                    scratch, combiner);
        } else {
            Transport.super.sendRecvCombine(sendPeer, src, srcOffset, srcLength, recvPeer, acc, accOffset, length,
                    unitBytes, scratch, combiner);
        }
    }

    @Override
    public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                         int recvPeer, MemorySegment dst, long dstOffset, long dstLength) {
        Transport out = route(sendPeer);
        Transport in = route(recvPeer);
        if (out == in) {
            out.sendRecv(sendPeer, src, srcOffset, srcLength, recvPeer, dst, dstOffset, dstLength);
            return;
        }
        if (worker == null) {
            worker = new SendWorker("kolo-send-" + rank());
        }
        worker.post(out, sendPeer, src, srcOffset, srcLength);
        try {
            in.recv(recvPeer, dst, dstOffset, dstLength);
        } catch (RuntimeException e) {
            // Unblock the send (its peer may be waiting on us) before reporting the receive's failure.
            out.abort(e);
            worker.awaitQuietly();
            throw e;
        }
        RuntimeException sendFailure = worker.await();
        if (sendFailure != null) {
            in.abort(sendFailure);
            throw sendFailure;
        }
    }

    @Override
    public PeerWait stalledOn() {
        PeerWait remoteWait = remote.stalledOn();
        return remoteWait != null ? remoteWait : shm.stalledOn();
    }

    @Override
    public void abort(RuntimeException cause) {
        shm.abort(cause);
        remote.abort(cause);
    }

    @Override
    public void close() {
        try {
            shm.close();
        } finally {
            remote.close();
            if (worker != null) {
                worker.close();
            }
        }
    }

    @Override
    public String toString() {
        return "HostRoutingTransport[" + shm + ", " + remote + "]";
    }
}
