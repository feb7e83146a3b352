package io.kolo.launcher;

import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.tools.BenchCommand;
import io.kolo.launcher.tools.HostfileCommand;
import io.kolo.launcher.tools.K8sEntry;
import io.kolo.launcher.tools.KeysCommand;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The {@code kolo} command. Exit codes: 0 when every rank succeeded, the first failing rank's exit code,
 * 2 for a usage error (reported as one line).
 */
public final class Main {
    public static final int USAGE = UsageException.EXIT_CODE;

    /**
     * The subcommands, in the order help lists them. Made when needed: picocli's model of a command is built by
     * reflection, run once and interpreted, so {@code kolo run} builds only its own (see {@link #commandLine}).
     */
    private static final Map<String, Supplier<Subcommand>> SUBCOMMANDS = subcommands();

    // The names repeat the commands' @Command names (MainTest checks): reading the annotations would parse every
    // command's on each start.
    static Map<String, Supplier<Subcommand>> subcommands() {
        Map<String, Supplier<Subcommand>> all = new LinkedHashMap<>();
        all.put("run", RunCommand::new);
        all.put("keys", KeysCommand::new);
        all.put("hostfile", HostfileCommand::new);
        all.put("bench", BenchCommand::new);
        all.put(K8sEntry.NAME, K8sEntry::new);
        return all;
    }

    @Command(name = "kolo", addMethodSubcommands = false,
            description = "Kolo: ring-allreduce for the JVM. 'kolo COMMAND --help' for a command's options.")
    static final class Kolo {
        @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
        boolean help;
    }

    static {
        // picocli's factory looks for Groovy's closure class when it first loads, and on every start that lookup
        // fails with an exception: Kolo's annotations hold no closures (docs/performance.md, "First run").
        System.setProperty("picocli.disable.closures", "true");
    }

    private Main() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err, true);
        System.out.flush();
        System.exit(code);
    }

    /** In-process entry point for tests: no shutdown hook, no System.exit. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, false);
    }

    static int run(String[] args, PrintStream out, PrintStream err, boolean installShutdownHook) {
        List<String> argv = new ArrayList<>(Arrays.asList(args));
        if (!argv.isEmpty() && argv.getFirst().equals(K8sEntry.NAME)) {
            return K8sEntry.run(argv.subList(1, argv.size()), out, err);
        }
        if (!argv.isEmpty() && !argv.getFirst().startsWith("-") && !SUBCOMMANDS.containsKey(argv.getFirst())) {
            // picocli would say "Unmatched arguments from index 0", listing the whole command line.
            return usage(err, "unknown command '" + argv.getFirst() + "' (commands: "
                    + String.join(", ", SUBCOMMANDS.keySet()) + "; see 'kolo --help')");
        }
        CommandLine cli = commandLine(argv.isEmpty() ? null : argv.getFirst());
        if (!argv.isEmpty() && argv.getFirst().equals("run")) {
            argv = new ArrayList<>(argv.subList(0, 1));
            argv.addAll(ProgramBoundary.normalize(Arrays.asList(args).subList(1, args.length),
                    cli.getSubcommands().get("run").getCommandSpec()));
        }
        // Arguments reach programs as given, as with mpirun: never replace "@FILE" by the file's contents.
        cli.setExpandAtFiles(false);
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        try {
            CommandLine.ParseResult parsed = cli.parseArgs(argv.toArray(String[]::new));
            if (CommandLine.printHelpIfRequested(parsed)) {
                return 0;
            }
            if (!parsed.hasSubcommand()) {
                return usage(err, "missing command; try 'kolo --help'");
            }
            CommandLine.ParseResult chosen = parsed.subcommand();
            while (chosen.hasSubcommand()) {   // kolo bench scale
                chosen = chosen.subcommand();
            }
            Subcommand command = chosen.commandSpec().commandLine().getCommand();
            return command.call(out, err, installShutdownHook);
        } catch (CommandLine.ParameterException e) {
            String first = e.getMessage() == null ? "bad arguments" : e.getMessage().lines().findFirst().orElse("");
            CommandLine.Model.ArgSpec spec = e.getArgSpec();
            if (spec == null && e instanceof CommandLine.MissingParameterException m && !m.getMissing().isEmpty()) {
                spec = m.getMissing().getFirst();
            }
            first = asTyped(first, spec, argv);
            String name = e.getCommandLine().getCommandName();
            String help = name.equals("kolo") ? "kolo --help" : "kolo " + name + " --help";
            return usage(err, first + " (see '" + help + "')");
        } catch (UsageException e) {
            return usage(err, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("kolo: interrupted");
            return 130;
        }
    }

    /**
     * {@code kolo} with only the subcommand {@code first} names, when it names one; otherwise (help, a mistyped
     * command) with all of them, so that help and errors list every command.
     */
    static CommandLine commandLine(String first) {
        CommandLine cli = new CommandLine(new Kolo());
        Supplier<Subcommand> only = first == null ? null : SUBCOMMANDS.get(first);
        if (only != null) {
            cli.addSubcommand(first, only.get());
        } else {
            SUBCOMMANDS.forEach((name, command) -> cli.addSubcommand(name, command.get()));
        }
        return cli;
    }

    /**
     * picocli's {@code message} names an option by its longest name ("--machinefile" for a missing --hostfile value):
     * the name the user typed instead, when {@code argv} has one of the option's names.
     */
    static String asTyped(String message, CommandLine.Model.ArgSpec spec, List<String> argv) {
        if (!(spec instanceof CommandLine.Model.OptionSpec option)) {
            return message;
        }
        for (String arg : argv) {
            if (arg.equals("--")) {
                break;
            }
            for (String name : option.names()) {
                if (arg.equals(name) || arg.startsWith(name + "=")) {
                    return message.replace("'" + option.longestName() + "'", "'" + name + "'");
                }
            }
        }
        return message;
    }

    private static int usage(PrintStream err, String message) {
        err.println("kolo: " + message);
        err.flush();
        return USAGE;
    }
}
