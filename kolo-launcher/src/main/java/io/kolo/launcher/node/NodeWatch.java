package io.kolo.launcher.node;

import io.kolo.launcher.job.FailureRecord;
import io.kolo.launcher.job.Job;

import io.kolo.bootstrap.StoreKeys;
import io.kolo.bootstrap.KeyValueStore;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Set;

/**
 * What a per-node launcher watches besides its own ranks, on one background thread: a failure recorded by
 * another node's launcher (this node's ranks are then stopped too), and the liveness of the other nodes. Every
 * node but 0 writes a heartbeat to the store ({@code node/<r>/beat}); node 0 declares a node lost when its
 * heartbeat stops, or when it never joined within the start timeout, and the other nodes learn of node 0's own
 * loss when the store goes away. When its ranks are done each node records its exit code ({@code node/<r>/done}),
 * and node 0, which serves the store, stays until every other node has done so or is lost.
 */
final class NodeWatch {
    /** Exit code of a node whose job failed because a node was lost (as kolo run's for a lost ssh connection). */
    static final int NODE_LOST = 255;
    private static final Duration POLL = Duration.ofMillis(250);
    private static final Duration BEAT = Duration.ofSeconds(1);
    // Ten missed heartbeats: a launcher stalled this long (or its machine gone) is not coming back in time.
    static final Duration LOST_AFTER = Duration.ofSeconds(10);

    private final NodeRun.Plan plan;
    private final KeyValueStore store;
    private final NodeFailures failures;
    private final Job job;
    private final PrintStream err;
    private final long startDeadline;
    private final long[] lastBeat;
    private final String[] beats;
    private final Set<Integer> lost = ConcurrentHashMap.newKeySet();
    private final Set<Integer> finished = ConcurrentHashMap.newKeySet();
    private volatile boolean stopped;
    private volatile boolean failing;
    private volatile Thread thread;
    private long beat;

    NodeWatch(NodeRun.Plan plan, KeyValueStore store, NodeFailures failures, Job job, PrintStream err) {
        this.err = err;
        this.plan = plan;
        this.store = store;
        this.failures = failures;
        this.job = job;
        this.startDeadline = System.nanoTime() + Duration.ofSeconds(plan.startTimeoutSeconds()).toNanos();
        this.lastBeat = new long[plan.nnodes()];
        this.beats = new String[plan.nnodes()];
    }

    void start() {
        thread = Thread.ofPlatform().daemon().name("kolo-node-watch").start(this::loop);
    }

    private void loop() {
        long nextBeat = 0;
        while (!stopped) {
            try {
                if (plan.nodeRank() != 0 && System.nanoTime() >= nextBeat) {
                    store.put(StoreKeys.nodeBeat(plan.nodeRank()), Long.toString(++beat));
                    nextBeat = System.nanoTime() + BEAT.toNanos();
                }
                failures.first(plan::isLocal).ifPresent(this::failHere);
                if (plan.nodeRank() == 0) {
                    checkNodes();
                }
            } catch (RuntimeException storeGone) {
                if (!stopped) {
                    failHere(new FailureRecord.Failure("lost the rendezvous server on node 0 (" + plan.endpoint() + "): "
                            + storeGone.getMessage(), NODE_LOST));
                }
                return;
            }
            try {
                Thread.sleep(POLL);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Node 0: which nodes are done, which are alive, which are lost. */
    private void checkNodes() {
        long now = System.nanoTime();
        for (int r = 1; r < plan.nnodes(); r++) {
            if (lost.contains(r) || finished.contains(r)) {
                continue;
            }
            if (store.tryGet(StoreKeys.nodeDone(r)).isPresent()) {
                finished.add(r);
                continue;
            }
            Optional<String> b = store.tryGet(StoreKeys.nodeBeat(r));
            if (b.isPresent() && !b.get().equals(beats[r])) {
                beats[r] = b.get();
                lastBeat[r] = now;
            } else if (beats[r] != null && now - lastBeat[r] > LOST_AFTER.toNanos()) {
                lose(r, "its kolo run stopped answering (no heartbeat for " + LOST_AFTER.toSeconds() + " s)");
            } else if (beats[r] == null && now > startDeadline) {
                lose(r, "its kolo run did not join within " + plan.startTimeoutSeconds() + " s (--start-timeout)");
            }
        }
    }

    private void lose(int node, String why) {
        lost.add(node);
        int first = node * plan.perNode();
        String ranks = plan.perNode() == 1 ? "rank " + first : "ranks " + first + "-" + (first + plan.perNode() - 1);
        FailureRecord.Failure failure = failures.record(first, "node " + node + " (" + ranks + ") was lost: " + why, NODE_LOST);
        if (job.ending()) {
            // Its ranks are already stopping (Kolo ranks see a lost peer at once): say why all the same.
            synchronized (err) {
                err.println("kolo: " + failure.cause());
            }
        } else {
            failHere(failure);
        }
    }

    private void failHere(FailureRecord.Failure failure) {
        if (failing) {
            return;
        }
        failing = true;
        // To the supervisor, which stops the ranks on its own thread while the heartbeat goes on here.
        job.failElsewhere(failure);
    }

    /** This node's launcher was stopped (Ctrl-C, SIGTERM, its pod deleted): the other nodes stop too. */
    void interrupted() {
        int first = plan.nodeRank() * plan.perNode();
        failures.record(first, "node " + plan.nodeRank() + " (" + plan.hostName() + ")'s kolo run was stopped by"
                + " a signal", StopSignal.code());
    }

    /**
     * After {@link #interrupted()}, this node's ranks have stopped: says so to node 0 from the shutdown hook itself,
     * since the JVM halts when the hook returns, usually before the main thread gets to {@link #finish}; node 0 would
     * otherwise wait for this node's heartbeat to run out and then call it lost.
     */
    void stoppedBySignal() {
        done(StopSignal.code());
    }

    private void done(int code) {
        if (plan.nodeRank() == 0) {
            return;
        }
        try {
            store.put(StoreKeys.nodeDone(plan.nodeRank()), Integer.toString(code));
        } catch (RuntimeException storeGone) {
            // Node 0 is gone; its own launcher reports why.
        }
    }

    /**
     * This node's ranks are done with {@code code}: records it and, on node 0, waits until every other node has
     * recorded its own or is lost. Returns this launcher's exit code: its own ranks' code, else on node 0 the
     * first other node's failure.
     */
    int finish(int code) throws InterruptedException {
        if (plan.nodeRank() != 0) {
            stop();
            done(code);
            return code;
        }
        while (finished.size() + lost.size() < plan.nnodes() - 1 && thread.isAlive()) {
            Thread.sleep(POLL);
        }
        stop();
        if (code != 0) {
            return code;
        }
        for (int r = 1; r < plan.nnodes(); r++) {
            int other = store.tryGet(StoreKeys.nodeDone(r)).map(Integer::parseInt).orElse(NODE_LOST);
            if (other != 0) {
                return other;
            }
        }
        return 0;
    }

    private void stop() throws InterruptedException {
        stopped = true;
        Thread t = thread;
        if (t != null) {
            t.interrupt();
            t.join(Duration.ofSeconds(5));
        }
    }
}
