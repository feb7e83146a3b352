package io.kolo.launcher;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.Command;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code kolo} command's table of subcommands, which {@link Main} keeps by name to build only the one run. */
class MainTest {
    @Test
    void everySubcommandIsListedUnderItsOwnCommandName() {
        Map<String, Supplier<Subcommand>> all = Main.subcommands();
        assertEquals(java.util.List.of("run", "keys", "hostfile", "bench", "k8s"), java.util.List.copyOf(all.keySet()));
        all.forEach((name, make) -> {
            Command command = make.get().getClass().getAnnotation(Command.class);
            assertNotNull(command, name + " has no @Command");
            assertEquals(name, command.name(), "listed as '" + name + "' but its @Command is named otherwise");
            // picocli would otherwise scan every method of the command for more subcommands on each start.
            assertEquals(false, command.addMethodSubcommands(), name + ": set addMethodSubcommands = false");
        });
    }

    /**
     * A mistyped command (or "kolo mpirun ...", "kolo -np 4 ...") names itself and the commands there are. Before:
     * "kolo: Unmatched argument at index 0: 'rnu'", and for kolo keys without --out, whatever the action:
     * "Missing required option: '--out=DIR'".
     */
    @Test
    void anUnknownCommandOrActionIsNamedWithWhatThereIs() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(2, Main.run(new String[]{"rnu", "-np", "2", "--", "true"}, o, e, false));
        assertEquals("kolo: unknown command 'rnu' (commands: run, keys, hostfile, bench, k8s; see 'kolo --help')",
                err.toString(StandardCharsets.UTF_8).strip());
        err.reset();
        assertEquals(2, Main.run(new String[]{"keys", "genrate"}, o, e, false));
        assertEquals("kolo: unknown keys action 'genrate' (expected: kolo keys generate --out DIR)",
                err.toString(StandardCharsets.UTF_8).strip());
        err.reset();
        assertEquals(2, Main.run(new String[]{"keys", "generate"}, o, e, false));
        assertEquals("kolo: missing --out DIR (where to write the keys)", err.toString(StandardCharsets.UTF_8).strip());
    }

    /**
     * picocli names an option by its longest name; the message names it as typed. Before: "kolo run -np abc" said
     * "option '--np'", and "kolo run --hostfile" (no file) "option '--machinefile'".
     */
    @Test
    void aBadOptionValueIsReportedUnderTheNameTyped() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(2, Main.run(new String[]{"run", "-np", "abc", "--", "true"}, o, e, false));
        assertEquals("kolo: Invalid value for option '-np': 'abc' is not an int (see 'kolo run --help')",
                err.toString(StandardCharsets.UTF_8).strip());
        err.reset();
        assertEquals(2, Main.run(new String[]{"run", "-np", "1", "--hostfile"}, o, e, false));
        assertEquals("kolo: Missing required parameter for option '--hostfile' (FILE) (see 'kolo run --help')",
                err.toString(StandardCharsets.UTF_8).strip());
    }

    @Test
    void helpListsEverySubcommand() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[]{"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), false);
        String help = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, help);
        for (String name : Main.subcommands().keySet()) {
            assertTrue(help.contains("  " + name + " "), "kolo --help does not list " + name + ":\n" + help);
        }
    }
}
