package io.kolo.launcher;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code kolo} command. Exit codes: 0 when every rank succeeded, the first failing rank's exit code,
 * 2 for a usage error (reported as one line).
 */
public final class Main {
    static final int USAGE = 2;

    @Command(name = "kolo",
            subcommands = {
                    RunCommand.class,
                    KeysCommand.class,
                    HostfileCommand.class,
                    BenchCommand.class,
                    K8sEntry.class,
            },
            description = "Kolo: ring-allreduce for the JVM. 'kolo COMMAND --help' for a command's options.")
    static final class Kolo {
        @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
        boolean help;
    }

    private Main() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err, true);
        System.out.flush();
        System.exit(code);
    }

    /** In-process entry point for tests: no shutdown hook, no System.exit. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, false);
    }

    static int run(String[] args, PrintStream out, PrintStream err, boolean installShutdownHook) {
        List<String> argv = new ArrayList<>(Arrays.asList(args));
        if (!argv.isEmpty() && argv.getFirst().equals(K8sEntry.NAME)) {
            return K8sEntry.run(argv.subList(1, argv.size()), out, err);
        }
        if (!argv.isEmpty() && argv.getFirst().equals("run")) {
            argv = new ArrayList<>(argv.subList(0, 1));
            argv.addAll(ProgramBoundary.normalize(Arrays.asList(args).subList(1, args.length)));
        }
        CommandLine cli = new CommandLine(new Kolo());
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
            Subcommand command = parsed.subcommand().commandSpec().commandLine().getCommand();
            return command.call(out, err, installShutdownHook);
        } catch (CommandLine.ParameterException e) {
            String first = e.getMessage() == null ? "bad arguments" : e.getMessage().lines().findFirst().orElse("");
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

    private static int usage(PrintStream err, String message) {
        err.println("kolo: " + message);
        err.flush();
        return USAGE;
    }
}
