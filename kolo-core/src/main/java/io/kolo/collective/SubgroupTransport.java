package io.kolo.collective;

import io.kolo.transport.Transport;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A {@link Transport} view over a subset of a parent's ranks, renumbered 0..k-1, so that the flat algorithms
 * run unchanged inside one host (the local group) or across hosts (the cross group). Calls map the peer and go
 * straight to the parent: no allocation, and per-pair ordering is the parent's because the parent is used from
 * the same single thread.
 *
 * <p>Closing a view does nothing (the parent's owner closes the parent); aborting a view aborts the parent,
 * because a failure in one phase of a collective dooms the whole job.
 */
final class SubgroupTransport implements Transport {

    private final Transport parent;
    private final int[] members;
    private final int rank;

    /**
     * @param members parent ranks of the group in their new order; must contain the parent's own rank once
     */
    SubgroupTransport(Transport parent, int[] members) {
        this.parent = parent;
        this.members = members.clone();
        int me = -1;
        for (int i = 0; i < this.members.length; i++) {
            int m = this.members[i];
            if (m < 0 || m >= parent.size()) {
                throw new IllegalArgumentException("subgroup member " + m + " is not a rank of a job of "
                        + parent.size());
            }
            for (int j = 0; j < i; j++) {
                if (this.members[j] == m) {
                    throw new IllegalArgumentException("subgroup lists rank " + m + " twice: " + Arrays.toString(members));
                }
            }
            if (m == parent.rank()) {
                me = i;
            }
        }
        if (me < 0) {
            throw new IllegalArgumentException("rank " + parent.rank() + " is not in its subgroup " + Arrays.toString(members));
        }
        this.rank = me;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return members.length;
    }

    @Override
    public void send(int peer, MemorySegment src, long offset, long length) {
        parent.send(members[peer], src, offset, length);
    }

    @Override
    public void recv(int peer, MemorySegment dst, long offset, long length) {
        parent.recv(members[peer], dst, offset, length);
    }

    @Override
    public void sendRecv(int sendPeer, MemorySegment src, long srcOffset, long srcLength,
                         int recvPeer, MemorySegment dst, long dstOffset, long dstLength) {
        parent.sendRecv(members[sendPeer], src, srcOffset, srcLength, members[recvPeer], dst, dstOffset, dstLength);
    }

    @Override
    public void sendRecvCombine(int sendPeer, MemorySegment src, long srcOffset, long srcLength, int recvPeer,
                                MemorySegment acc, long accOffset, long length, int unitBytes, MemorySegment scratch,
                                io.kolo.transport.Combiner combiner) {
        parent.sendRecvCombine(members[sendPeer], src, srcOffset, srcLength, members[recvPeer], acc, accOffset, length,
                unitBytes, scratch, combiner);
    }

    @Override
    public void abort(RuntimeException cause) {
        parent.abort(cause);
    }

    @Override
    public void close() {
        // The parent belongs to whoever created it.
    }

    @Override
    public String toString() {
        return "SubgroupTransport[" + rank + " of " + Arrays.toString(members) + " over " + parent + "]";
    }
}
