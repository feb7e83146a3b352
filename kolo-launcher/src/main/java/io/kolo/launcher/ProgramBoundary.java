package io.kolo.launcher;

import picocli.CommandLine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Where {@code kolo run}'s own options end and the program begins, as mpirun decides it: at the first word that is
 * not one of ours, or after {@code -jar APP} / {@code -cp CP MAIN}. Rewrites the arguments so that picocli sees the
 * program behind an explicit {@code --}.
 */
final class ProgramBoundary {
    private ProgramBoundary() {
    }

    /**
     * How many words follow each option of {@code kolo run} (its value, or two for {@code -mca KEY VALUE}), read from
     * the options picocli knows, so that a new option can never be mistaken for the start of the program.
     */
    private static Map<String, Integer> optionArity(CommandLine.Model.CommandSpec run) {
        Map<String, Integer> arity = new java.util.HashMap<>();
        for (CommandLine.Model.OptionSpec o : run.options()) {
            for (String name : o.names()) {
                arity.put(name, o.arity().max());
            }
        }
        return arity;
    }

    /** As {@link #normalize(List, CommandLine.Model.CommandSpec)} with a model of {@code kolo run} of its own. */
    static List<String> normalize(List<String> args) {
        return normalize(args, new CommandLine(new RunCommand()).getCommandSpec());
    }

    /**
     * Rewrites mpirun-style arguments so picocli sees the program behind an explicit "--": like mpirun, the
     * launcher's own options end at the first word that is not one, and after -jar APP or -cp CP MAIN,
     * so the program's own options (even ones named like ours) always reach the program.
     *
     * @param run picocli's model of {@code kolo run}, the one that then parses the result
     */
    static List<String> normalize(List<String> args, CommandLine.Model.CommandSpec run) {
        Map<String, Integer> optionArity = optionArity(run);
        List<String> result = new ArrayList<>();
        int i = 0;
        while (i < args.size()) {
            String a = args.get(i);
            if (a.equals("--")) {
                result.addAll(args.subList(i, args.size()));
                return result;
            }
            if (a.equals("-jar") || a.equals("-cp") || a.equals("-classpath") || a.equals("--class-path")) {
                result.add(a);
                if (i + 1 < args.size()) {
                    result.add(args.get(i + 1));
                    result.add("--");
                    result.addAll(args.subList(i + 2, args.size()));
                }
                return result;
            }
            int eq = a.indexOf('=');
            if (eq > 1 && a.startsWith("-") && optionArity.getOrDefault(a.substring(0, eq), 0) > 0) {
                // horovodrun's argparse also takes --flag=value (and -np=4): the same as two words here.
                String name = a.substring(0, eq);
                result.add(name);
                result.add(a.substring(eq + 1));
                int end = Math.min(args.size(), i + optionArity.get(name));
                result.addAll(args.subList(i + 1, end));
                i = end;
                continue;
            }
            int values = optionArity.getOrDefault(a, 0);
            if (values > 0) {
                int end = Math.min(args.size(), i + 1 + values);
                result.addAll(args.subList(i, end));
                i = end;
                continue;
            }
            if (a.startsWith("-")) {
                result.add(a);
                i++;
                continue;
            }
            result.add("--");
            result.addAll(args.subList(i, args.size()));
            return result;
        }
        return result;
    }
}
