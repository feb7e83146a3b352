package io.kolo.launcher.elastic;

import io.kolo.launcher.job.Hosts;

import java.util.function.Consumer;

/**
 * What the launcher says about a discovery script that fails while the job runs: one line when it starts failing (or
 * fails in another way), one when it answers again. The script is polled every second, and a line per poll would
 * bury the job's output for as long as it fails.
 */
final class DiscoveryWarnings {
    private final Consumer<String> print;
    private String failing;

    DiscoveryWarnings(Consumer<String> print) {
        this.print = print;
    }

    /** The hosts now, or null when the script failed this time (the hosts found before stay). */
    java.util.List<Hosts.Host> find(HostDiscovery discovery) {
        try {
            java.util.List<Hosts.Host> found = discovery.find();
            answered();
            return found;
        } catch (HostDiscovery.Failed e) {
            failed(e);
            return null;
        }
    }

    private void failed(HostDiscovery.Failed e) {
        if (!e.getMessage().equals(failing)) {
            failing = e.getMessage();
            print.accept("kolo: warning: " + failing + "; keeping the hosts found before until it answers again");
        }
    }

    private void answered() {
        if (failing != null) {
            failing = null;
            print.accept("kolo: --host-discovery-script answers again");
        }
    }
}
