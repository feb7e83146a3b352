package io.kolo.transport;

/**
 * What a rank's exchange waits for from one peer, for a message on the failure path (a timed-out wait): made only when
 * asked, from what the transport keeps in plain fields while it waits.
 *
 * @param rank         this rank
 * @param peer         the rank it waits on
 * @param receiving    true when it waits for the peer's bytes, false when for the peer to take this rank's
 * @param bytes        the message's length
 * @param moved        how many of its bytes have moved
 * @param stalledNanos how long nothing has moved
 */
public record PeerWait(int rank, int peer, boolean receiving, long bytes, long moved, long stalledNanos) {
    /** "receive 16384 bytes from {@code whom} (0 received)", or "send ... to {@code whom} (... sent)". */
    public String what(String whom) {
        return receiving ? "receive " + bytes + " bytes from " + whom + " (" + moved + " received)"
                : "send " + bytes + " bytes to " + whom + " (" + moved + " sent)";
    }
}
