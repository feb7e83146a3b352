package io.kolo.transport;

/**
 * The rings this rank exchanges through with each rank of its host, each set up on the pair's first exchange: the
 * receiver adds the ring to its own file ({@link ShmFile#addRing}) when it first receives from the sender, and the
 * sender maps it once the receiver has marked it ready, so that a host's ranks hold rings only for the pairs that
 * exchange. Used by one thread at a time, as the transport's calls are.
 */
final class ShmRings {
    private final int rank;
    private final ShmFile own;
    /** Indexed by global rank: the host's other ranks' files, null elsewhere. */
    private final ShmFile[] peerFiles;
    /** Indexed by global rank: where a peer's ring lies in this rank's file, and this rank's ring in the peer's. */
    private final int[] ringIn;
    private final int[] ringOut;
    private final ShmRing[] inbox;
    private final ShmRing[] outbox;

    ShmRings(ShmLinks links) {
        this.rank = links.rank();
        this.own = links.own();
        this.peerFiles = links.peerFiles();
        this.ringIn = links.ringIn();
        this.ringOut = links.ringOut();
        this.inbox = new ShmRing[peerFiles.length];
        this.outbox = new ShmRing[peerFiles.length];
    }

    /** Whether {@code peer} is another rank of this host. */
    boolean reaches(int peer) {
        return peer >= 0 && peer < peerFiles.length && peerFiles[peer] != null;
    }

    /**
     * The ring {@code peer}'s messages to this rank arrive through, added now if this is the first; the peer is
     * woken, since it may wait to send.
     *
     * @throws io.kolo.KoloException when {@code /dev/shm} has no room for it
     */
    ShmRing receiveFrom(int peer) {
        ShmRing r = inbox[peer];
        if (r == null) {
            r = own.addRing(ringIn[peer], rank, peer);
            inbox[peer] = r;
            peerFiles[peer].ringBell();
        }
        return r;
    }

    /** The ring this rank's messages to {@code peer} go through, or null until {@code peer} has added it. */
    ShmRing sendTo(int peer) {
        ShmRing r = outbox[peer];
        if (r == null) {
            r = peerFiles[peer].ringIfReady(ringOut[peer]);
            outbox[peer] = r;
        }
        return r;
    }

    /** Whether {@link #sendTo} would give the ring now. */
    boolean canSendTo(int peer) {
        return outbox[peer] != null || peerFiles[peer].ringReady(ringOut[peer]);
    }

    /** The ring from {@code peer} if this rank has received from it, else null (diagnostics). */
    ShmRing receivedFrom(int peer) {
        return inbox[peer];
    }

    /** How many rings this rank has added to its file, and mapped in its peers' (tests, diagnostics). */
    int count() {
        int n = 0;
        for (int p = 0; p < inbox.length; p++) {
            n += (inbox[p] != null ? 1 : 0) + (outbox[p] != null ? 1 : 0);
        }
        return n;
    }
}
