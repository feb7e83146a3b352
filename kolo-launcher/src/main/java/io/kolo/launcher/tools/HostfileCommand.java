package io.kolo.launcher.tools;

import io.kolo.launcher.Subcommand;
import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.UsageException;

import io.kolo.bootstrap.IoReason;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code kolo hostfile}: writes a hostfile from {@code -H} or a list of host names, in Open MPI syntax
 * ({@code host slots=N}, what the MPI Operator writes to {@code /etc/mpi/hostfile}) or MPICH syntax
 * ({@code host:N}); {@code kolo run}, mpirun and mpiexec all read it.
 */
@Command(name = "hostfile", addMethodSubcommands = false, sortOptions = false,
        description = "Render a hostfile (Open MPI or MPICH syntax) from -H or a list of hosts.",
        customSynopsis = {"kolo hostfile -H host:N[,host:N...] [--format openmpi|mpich] [--out FILE]",
                "kolo hostfile [--slots N] [--format openmpi|mpich] [--out FILE] HOST..."})
public final class HostfileCommand implements Subcommand {
    @Option(names = {"-H", "--hosts"}, paramLabel = "HOSTS", description = "Hosts and slots, host:N[,host:N...].")
    String hosts;

    @Option(names = "--slots", paramLabel = "N", defaultValue = "1",
            description = "Slots for each HOST given as an argument (default: ${DEFAULT-VALUE}).")
    int slots = 1;

    @Option(names = "--format", paramLabel = "openmpi|mpich", defaultValue = "openmpi",
            description = "openmpi: 'host slots=N'; mpich: 'host:N' (default: ${DEFAULT-VALUE}).")
    String format = "openmpi";

    @Option(names = "--out", paramLabel = "FILE", description = "Write here instead of standard output.")
    Path out;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Parameters(paramLabel = "HOST", description = "Host names (or host:N).")
    List<String> names = new ArrayList<>();

    @Override
    public int call(PrintStream stdout, PrintStream err, boolean installShutdownHook) {
        String text = render();
        if (out == null) {
            stdout.print(text);
            stdout.flush();
            return 0;
        }
        try {
            Files.writeString(out, text);
        } catch (IOException e) {
            err.println("kolo: cannot write " + out + ": " + IoReason.of(e));
            return 1;
        }
        return 0;
    }

    String render() {
        if (slots < 1) {
            throw new UsageException("--slots must be at least 1, got " + slots);
        }
        if ((hosts == null) == names.isEmpty()) {
            throw new UsageException("give either -H host:N[,host:N...] or host names, e.g. kolo hostfile --slots 4"
                    + " node-0 node-1");
        }
        List<Hosts.Host> list;
        if (hosts != null) {
            list = Hosts.parseList(hosts);
        } else {
            List<String> specs = new ArrayList<>();
            for (String n : names) {
                specs.add(n.contains(":") ? n : n + ":" + slots);
            }
            list = Hosts.parseList(String.join(",", specs));
        }
        boolean openMpi = switch (format.toLowerCase(Locale.ROOT)) {
            case "openmpi", "ompi", "open-mpi" -> true;
            case "mpich", "intel", "hydra" -> false;
            default -> throw new UsageException("unknown --format '" + format + "' (expected openmpi or mpich)");
        };
        StringBuilder sb = new StringBuilder();
        for (Hosts.Host h : list) {
            sb.append(h.name()).append(openMpi ? " slots=" + h.slots() : ":" + h.slots()).append('\n');
        }
        return sb.toString();
    }
}
