package io.kolo.transport;

import java.util.Optional;

/**
 * Whether the host's other ranks are still there: each inbox file carries its owner's pid and state (running,
 * closed, aborted), and a rank killed outright (SIGKILL) is seen by its process being gone.
 */
final class ShmPeers {
    private final ShmFile[] files;
    private final ProcessHandle[] processes;

    ShmPeers(ShmFile[] files) {
        this.files = files;
        this.processes = new ProcessHandle[files.length];
        for (int p = 0; p < files.length; p++) {
            if (files[p] != null) {
                Optional<ProcessHandle> h = ProcessHandle.of(files[p].pid());
                processes[p] = h.orElse(null);
            }
        }
    }

    /**
     * Why {@code peer} is lost, or null while it looks alive: it aborted, closed its transport, or (when
     * {@code checkPid}, or when the caller already knows) its process is gone. An abort only relays a failure the
     * aborting rank saw; when another rank of this host has died, that death is what this rank reports, so that
     * every rank names the same cause even when the job's store went down with the aborting rank.
     */
    PeerFailedException gone(int peer, boolean checkPid, boolean knownDead) {
        int state = files[peer].state();
        String why;
        if (state == ShmFile.ABORTED) {
            PeerFailedException dead = deadHostRank(peer);
            if (dead != null) {
                return dead;
            }
            why = "rank " + peer + " aborted";
        } else if (state == ShmFile.CLOSED) {
            why = "rank " + peer + " closed its transport";
        } else if (knownDead || (checkPid && !alive(peer))) {
            return died(peer);
        } else {
            return null;
        }
        return new PeerFailedException(peer, "lost rank " + peer + " over shared memory: " + why, null,
                state == ShmFile.ABORTED);
    }

    /** A rank of this host other than {@code except} whose process is gone, as the failure to report; or null. */
    private PeerFailedException deadHostRank(int except) {
        for (int p = 0; p < files.length; p++) {
            if (p != except && files[p] != null && !alive(p)) {
                return died(p);
            }
        }
        return null;
    }

    private boolean alive(int peer) {
        return processes[peer] == null || processes[peer].isAlive();
    }

    private PeerFailedException died(int peer) {
        return new PeerFailedException(peer, "lost rank " + peer + " over shared memory: rank " + peer + " (pid "
                + files[peer].pid() + ") died: it exited, crashed or was killed", null, false);
    }
}
