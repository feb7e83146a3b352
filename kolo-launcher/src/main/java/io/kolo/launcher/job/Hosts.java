package io.kolo.launcher.job;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/** Host lists from {@code -H} and hostfiles, in the Open MPI and MPICH syntaxes people already have. */
public final class Hosts {

    public record Host(String name, int slots) {
        @Override
        public String toString() {
            return name + ":" + slots;
        }
    }

    private Hosts() {
    }

    /** {@code h1:2,h2:2}; a host without {@code :N} has one slot, as in mpirun. */
    public static List<Host> parseList(String spec) {
        List<Host> hosts = new ArrayList<>();
        for (String item : spec.split(",", -1)) {
            String s = item.strip();
            if (s.isEmpty()) {
                throw new UsageException("empty host in -H '" + spec + "' (expected host:slots[,host:slots...])");
            }
            hosts.add(parseMpich(s, "-H '" + spec + "'"));
        }
        return merge(hosts);
    }

    /**
     * Lines of a hostfile: Open MPI ({@code host slots=N [max_slots=M]}) or MPICH ({@code host:N}), with
     * {@code #} comments and blank lines.
     */
    public static List<Host> parseHostfile(List<String> lines, String fileName) {
        List<Host> hosts = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String where = fileName + ":" + (i + 1);
            String line = lines.get(i);
            int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            String[] words = line.split("\\s+");
            if (words.length == 1) {
                hosts.add(parseMpich(words[0], where));
                continue;
            }
            String name = words[0];
            checkName(name, where);
            Integer slots = null;
            Integer maxSlots = null;
            for (int w = 1; w < words.length; w++) {
                String[] kv = words[w].split("=", 2);
                if (kv.length != 2) {
                    throw new UsageException(where + ": cannot parse '" + words[w] + "' (expected slots=N or max_slots=N)");
                }
                switch (kv[0].toLowerCase(Locale.ROOT)) {
                    case "slots", "cpu" -> slots = positive(kv[1], where, "slots");
                    case "max_slots", "max-slots" -> maxSlots = positive(kv[1], where, "max_slots");
                    default -> throw new UsageException(where + ": unknown hostfile keyword '" + kv[0]
                            + "' (supported: slots=N, max_slots=M)");
                }
            }
            if (slots == null) {
                // Open MPI: max_slots alone still gives the host one slot.
                slots = 1;
            }
            if (maxSlots != null && maxSlots < slots) {
                throw new UsageException(where + ": slots=" + slots + " is more than max_slots=" + maxSlots);
            }
            hosts.add(new Host(name, slots));
        }
        if (hosts.isEmpty()) {
            throw new UsageException("hostfile " + fileName + " lists no hosts");
        }
        return merge(hosts);
    }

    /** One {@code host} or {@code host:slots}; a bad one throws with {@code where} (what gave it) first. */
    public static Host parseEntry(String s, String where) {
        return parseMpich(s, where);
    }

    private static Host parseMpich(String s, String where) {
        int colon = s.lastIndexOf(':');
        if (colon < 0) {
            checkName(s, where);
            return new Host(s, 1);
        }
        String name = s.substring(0, colon);
        checkName(name, where);
        return new Host(name, positive(s.substring(colon + 1), where, "slots for " + name));
    }

    /** A host name (DNS labels; underscores too, as container names have them) or IPv4 address, ssh's user@ allowed. */
    private static final java.util.regex.Pattern HOST = java.util.regex.Pattern.compile(
            "([A-Za-z0-9._-]+@)?(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
                    + "(?:\\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?");

    private static void checkName(String name, String where) {
        if (!HOST.matcher(name).matches()) {
            throw new UsageException(where + ": '" + name + "' is not a host name or IPv4 address (letters, digits,"
                    + " '-', '_' and '.' only; an optional user@ before it)");
        }
    }

    private static int positive(String value, String where, String what) {
        try {
            int n = Integer.parseInt(value.strip());
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // Reported below with the context the user needs.
        }
        throw new UsageException(where + ": " + what + " must be a positive integer (1 to " + Integer.MAX_VALUE
                + "), got '" + value + "'");
    }

    // mpirun adds up repeated hosts rather than treating them as separate machines.
    private static List<Host> merge(List<Host> hosts) {
        Map<String, Integer> slots = new LinkedHashMap<>();
        for (Host h : hosts) {
            slots.merge(h.name(), h.slots(), Integer::sum);
        }
        List<Host> merged = new ArrayList<>();
        slots.forEach((name, n) -> merged.add(new Host(name, n)));
        return merged;
    }

    public static int totalSlots(List<Host> hosts) {
        return hosts.stream().mapToInt(Host::slots).sum();
    }

    /**
     * Variables naming the default hostfile of the MPI launchers, in the order they are consulted: an
     * MPIJob launcher pod (Kubeflow mpi-operator) sets the Open MPI one to {@code /etc/mpi/hostfile}, so
     * {@code kolo run -np 4 -- ...} there needs no host option at all.
     */
    static final List<String> DEFAULT_HOSTFILE_VARS = List.of("OMPI_MCA_orte_default_hostfile",
            "PRTE_MCA_prte_default_hostfile", "I_MPI_HYDRA_HOST_FILE", "HYDRA_HOST_FILE");

    /** The variable and file of the default hostfile named by the environment, or null when there is none. */
    public static Map.Entry<String, String> defaultHostfile(Map<String, String> env) {
        for (String var : DEFAULT_HOSTFILE_VARS) {
            String v = env.get(var);
            if (v != null && !v.isBlank()) {
                return Map.entry(var, v.strip());
            }
        }
        return null;
    }

    /**
     * This machine's names; no DNS lookups of the user's hosts, so a typo cannot hang the launcher. Its own names
     * (host name, canonical name, address) are looked up on the first host that is not obviously local, so a job on
     * localhost alone (plain {@code -np}) never waits for them.
     */
    public static Predicate<String> localNames() {
        var resolved = new Object() {
            Set<String> names;
        };
        return host -> {
            if (host.equalsIgnoreCase("localhost") || host.equals("::1") || host.startsWith("127.")) {
                return true;
            }
            if (resolved.names == null) {
                resolved.names = ownNames();
            }
            return resolved.names.contains(host);
        };
    }

    private static Set<String> ownNames() {
        Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        try {
            InetAddress self = InetAddress.getLocalHost();
            names.add(self.getHostName());
            names.add(self.getHostName().split("\\.")[0]);
            names.add(self.getCanonicalHostName());
            names.add(self.getHostAddress());
        } catch (Exception ignored) {
            // Without a resolvable hostname only localhost and 127.x count as local.
        }
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            names.add(env);
        }
        return names;
    }
}
