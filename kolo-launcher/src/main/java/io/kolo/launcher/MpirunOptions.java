package io.kolo.launcher;

import io.kolo.launcher.job.RankMap;
import io.kolo.launcher.job.UsageException;

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Open MPI's {@code mpirun} options, with the single- and double-dash spellings it accepts and the meaning they have
 * there, so that a command line written for mpirun (a user's script, an MPIJob's launcher, Flyte's MPI plugin) runs
 * with {@code mpirun} replaced by {@code kolo run}. Options that only tune Open MPI's own transports are accepted and
 * ignored; {@link #ignored} says why, for {@code --verbose}.
 */
final class MpirunOptions {
    @Option(names = {"-N", "--npernode", "-npernode"}, paramLabel = "N",
            description = "Start N ranks on every host (-np defaults to N times the hosts).")
    Integer perNode;

    @Option(names = {"--map-by", "-map-by"}, paramLabel = "slot|node|core",
            description = "slot or core (default): fill each host's slots before the next host; node: place ranks"
                    + " round-robin over the hosts.")
    String mapBy;

    @Option(names = {"--oversubscribe", "-oversubscribe"},
            description = "Allow more ranks than the hosts have slots.")
    boolean oversubscribe;

    @Option(names = {"--nooversubscribe", "-nooversubscribe"},
            description = "Refuse more ranks than slots (the default).")
    boolean noOversubscribe;

    @Option(names = {"--allow-run-as-root", "-allow-run-as-root"},
            description = "Accepted: kolo run never refuses root.")
    boolean allowRunAsRoot;

    @Option(names = {"-wdir", "--wdir", "-wd", "--wd"}, paramLabel = "DIR",
            description = "Working directory of every rank (default: the launcher's; must exist on every host).")
    Path workingDirectory;

    @Option(names = {"--tag-output", "-tag-output"},
            description = "Accepted: kolo run always tags each line with [rank]<stream>:.")
    boolean tagOutput;

    @Option(names = {"--timestamp-output", "-timestamp-output"},
            description = "Prefix each line of output with the time it arrived.")
    boolean timestampOutput;

    @Option(names = {"--output-filename", "-output-filename"}, paramLabel = "DIR",
            description = "Also write each rank's output to DIR/1/rank.N/stdout and stderr (Open MPI's layout).")
    Path outputFilename;

    @Option(names = {"--report-bindings", "-report-bindings"},
            description = "Each rank prints the CPUs it is bound to (KOLO_REPORT_BINDINGS).")
    boolean reportBindings;

    @Option(names = {"--display-map", "-display-map"},
            description = "Print which host and local rank each rank gets before starting.")
    boolean displayMap;

    @Option(names = {"--prefix", "-prefix"}, paramLabel = "DIR",
            description = "Accepted and ignored: Open MPI's install prefix on remote hosts.")
    String prefix;

    @Option(names = {"-mca", "--mca"}, arity = "2", paramLabel = "KEY VALUE", hideParamSyntax = true,
            description = "plm_rsh_agent AGENT: start remote ranks with 'AGENT HOST COMMAND' instead of ssh (as"
                    + " OMPI_MCA_plm_rsh_agent; an MPIJob's kubexec.sh); plm_rsh_args ARGS: extra ssh arguments when"
                    + " the agent is ssh. Other keys are accepted and ignored: they tune Open MPI's own transports.")
    List<String> mca = new ArrayList<>();

    @Option(names = {"-gmca", "--gmca"}, arity = "2", paramLabel = "KEY VALUE", hideParamSyntax = true,
            description = "Accepted and ignored, as -mca.")
    List<String> gmca = new ArrayList<>();

    @Option(names = {"-launcher", "--launcher"}, paramLabel = "ssh|rsh",
            description = "Intel MPI's: how remote ranks start; rsh with -launcher-exec names the agent.")
    String launcher;

    @Option(names = {"-launcher-exec", "--launcher-exec"}, paramLabel = "AGENT",
            description = "Intel MPI's: the program that starts remote ranks ('AGENT HOST COMMAND'), as plm_rsh_agent.")
    String launcherExec;

    private static final java.util.Set<String> AGENT_KEYS = java.util.Set.of("plm_rsh_agent", "orte_rsh_agent");
    private static final String ARGS_KEY = "plm_rsh_args";

    /** The rsh agent named on the command line (-mca plm_rsh_agent, -launcher-exec), or null. */
    String rshAgent() {
        String mcaAgent = mcaValue(AGENT_KEYS);
        if (launcher != null) {
            String how = launcher.toLowerCase(java.util.Locale.ROOT);
            if (!how.equals("ssh") && !how.equals("rsh")) {
                throw new UsageException("-launcher " + launcher + ": kolo run starts remote ranks with ssh or with an"
                        + " rsh agent (-launcher rsh -launcher-exec AGENT)");
            }
            if (launcherExec == null) {
                return mcaAgent != null ? mcaAgent : how;
            }
        }
        if (launcherExec != null && mcaAgent != null && !launcherExec.equals(mcaAgent)) {
            throw new UsageException("use either -mca plm_rsh_agent or -launcher-exec, not both");
        }
        return launcherExec != null ? launcherExec : mcaAgent;
    }

    /** How the agent was named, for messages. */
    String rshAgentSource() {
        return launcherExec != null ? "-launcher-exec" : "-mca plm_rsh_agent";
    }

    /** -mca plm_rsh_args, or null. */
    String rshArgs() {
        return mcaValue(java.util.Set.of(ARGS_KEY));
    }

    /** The last value of one of {@code keys} among -mca and --gmca pairs, as Open MPI takes the last. */
    private String mcaValue(java.util.Set<String> keys) {
        String value = null;
        for (List<String> pairs : List.of(gmca, mca)) {
            for (int i = 0; i + 1 < pairs.size(); i += 2) {
                if (keys.contains(pairs.get(i))) {
                    value = pairs.get(i + 1);
                }
            }
        }
        return value;
    }

    /** How ranks are spread over hosts. */
    RankMap.Mapping mapping() {
        if (mapBy == null) {
            return RankMap.Mapping.SLOT;
        }
        // Open MPI's modifiers after a colon (":PE=2", ":OVERSUBSCRIBE") are its own; the policy is the first word.
        String[] parts = mapBy.split(":", 2);
        RankMap.Mapping mapping = switch (parts[0].toLowerCase(java.util.Locale.ROOT)) {
            case "slot", "core" -> RankMap.Mapping.SLOT;
            case "node" -> RankMap.Mapping.NODE;
            default -> throw new UsageException("--map-by " + mapBy + ": kolo run places ranks by slot (or core, the"
                    + " same here) or by node; use one of those");
        };
        if (parts.length > 1) {
            String modifier = parts[1].toUpperCase(java.util.Locale.ROOT);
            if (!modifier.equals("OVERSUBSCRIBE") && !modifier.equals("NOOVERSUBSCRIBE")) {
                throw new UsageException("--map-by " + mapBy + ": kolo run cannot honour the modifier '" + parts[1]
                        + "'; use slot, node or core (optionally :OVERSUBSCRIBE)");
            }
        }
        return mapping;
    }

    /** Whether more ranks than slots are allowed. */
    boolean oversubscribe() {
        if (oversubscribe && noOversubscribe) {
            throw new UsageException("use either --oversubscribe or --nooversubscribe, not both");
        }
        return oversubscribe || (mapBy != null && mapBy.toUpperCase(java.util.Locale.ROOT).endsWith(":OVERSUBSCRIBE"));
    }

    /** One line for each accepted option that changes nothing here, and why, for --verbose. */
    List<String> ignored() {
        List<String> lines = new ArrayList<>();
        if (allowRunAsRoot) {
            lines.add("kolo: --allow-run-as-root ignored: kolo run never refuses root");
        }
        if (tagOutput) {
            lines.add("kolo: --tag-output ignored: kolo run always tags output lines with [rank]<stream>:");
        }
        if (prefix != null) {
            lines.add("kolo: --prefix " + prefix + " ignored: it names Open MPI's installation; kolo run starts the"
                    + " command as given on every host");
        }
        for (int i = 0; i + 1 < mca.size(); i += 2) {
            if (AGENT_KEYS.contains(mca.get(i)) || mca.get(i).equals(ARGS_KEY)) {
                continue;
            }
            lines.add("kolo: -mca " + mca.get(i) + " " + mca.get(i + 1) + " ignored: it tunes Open MPI's own"
                    + " transports; Kolo's settings are KOLO_* variables (see docs/settings.md)");
        }
        for (int i = 0; i + 1 < gmca.size(); i += 2) {
            if (AGENT_KEYS.contains(gmca.get(i)) || gmca.get(i).equals(ARGS_KEY)) {
                continue;
            }
            lines.add("kolo: --gmca " + gmca.get(i) + " " + gmca.get(i + 1) + " ignored: it tunes Open MPI's own"
                    + " transports; Kolo's settings are KOLO_* variables (see docs/settings.md)");
        }
        return lines;
    }
}
