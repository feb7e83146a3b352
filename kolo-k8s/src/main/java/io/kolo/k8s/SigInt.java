package io.kolo.k8s;

import sun.misc.Signal;

/**
 * Ctrl-C while following a job interrupts the following, not the JVM, so that {@code kolo k8s} can ask whether to
 * delete the job. {@code sun.misc.Signal} (module jdk.unsupported) is the only way the JDK offers to catch SIGINT
 * without shutting down.
 */
final class SigInt {
    private SigInt() {
    }

    static void onFollow(Follower follower) {
        try {
            Signal.handle(new Signal("INT"), sig -> follower.interrupt());
        } catch (IllegalArgumentException unavailable) {
            // No SIGINT here (or the JVM was started with -Xrs): Ctrl-C then ends kolo k8s; the job goes on.
        }
    }
}
