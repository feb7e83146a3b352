package io.kolo.launcher;

import io.kolo.launcher.tools.K8sEntry;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The commands of README.md and docs/*.md as a new user copies them: every fenced {@code sh} block is valid shell,
 * every {@code ./kolo run|bench|keys|hostfile} line is accepted by the launcher's parser, the command is {@code ./kolo}
 * (no bare {@code kolo} that is not on the PATH), and every relative link leads to a file. The commands a page marks
 * runnable are run by {@code kolo-bench/scripts/docs-commands.sh}, outside the suite.
 */
class DocsCommandsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern BLOCK = Pattern.compile("(?m)^```sh\\n(.*?)^```$", Pattern.DOTALL);
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]+)(#[^)]*)?\\)");

    record Block(Path page, String text) {
        String where() {
            return ROOT.relativize(page).toString();
        }
    }

    static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    static List<Block> blocks() throws IOException {
        List<Block> blocks = new ArrayList<>();
        for (Path page : pages()) {
            Matcher m = BLOCK.matcher(Files.readString(page));
            while (m.find()) {
                blocks.add(new Block(page, m.group(1)));
            }
        }
        return blocks;
    }

    /** A block's commands, continuation lines joined, comment lines and trailing comments dropped. */
    static List<String> commands(String block) {
        List<String> commands = new ArrayList<>();
        StringBuilder cmd = new StringBuilder();
        for (String line : block.lines().toList()) {
            if (cmd.isEmpty() && (line.isBlank() || line.strip().startsWith("#"))) {
                continue;
            }
            if (line.endsWith("\\")) {
                cmd.append(line, 0, line.length() - 1);
                continue;
            }
            cmd.append(line.replaceAll("\\s+#\\s.*$", ""));
            commands.add(cmd.toString().strip());
            cmd.setLength(0);
        }
        return commands;
    }

    /** Shell words of a simple command: quotes removed, stops at a redirection, a pipe or a separator. */
    static List<String> words(String command) {
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    w.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                inWord = true;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(w.toString());
                    w.setLength(0);
                    inWord = false;
                }
            } else if (c == '>' || c == '<' || c == '|' || c == ';' || c == '&') {
                break;
            } else {
                w.append(c);
                inWord = true;
            }
        }
        if (inWord) {
            words.add(w.toString());
        }
        return words;
    }

    @Test
    void everyShellBlockIsValidShell() throws Exception {
        List<Block> blocks = blocks();
        assertTrue(blocks.size() >= 30, "the docs lost their commands: " + blocks.size() + " sh blocks");
        List<String> bad = new ArrayList<>();
        for (Block b : blocks) {
            Process bash = new ProcessBuilder("bash", "-n").redirectErrorStream(true).start();
            try (var in = bash.getOutputStream()) {
                in.write(b.text().getBytes(StandardCharsets.UTF_8));
            }
            String said = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(bash.waitFor(30, TimeUnit.SECONDS), "bash -n did not finish");
            if (bash.exitValue() != 0) {
                bad.add(b.where() + ": " + said.strip() + "\n" + b.text());
            }
        }
        assertEquals(List.of(), bad);
    }

    @Test
    void everyKoloCommandIsAcceptedByTheLauncherAndCalledAsDotSlashKolo() throws IOException {
        List<String> bad = new ArrayList<>();
        int checked = 0;
        for (Block b : blocks()) {
            for (String command : commands(b.text())) {
                List<String> words = new ArrayList<>(words(command));
                while (!words.isEmpty() && words.getFirst().matches("[A-Z_][A-Z0-9_]*=.*")) {
                    words.removeFirst();   // VAR=value before the command
                }
                if (words.isEmpty()) {
                    continue;
                }
                if (words.getFirst().equals("kolo")) {
                    bad.add(b.where() + ": a bare 'kolo' is not on a new user's PATH; write ./kolo: " + command);
                    continue;
                }
                if (!words.getFirst().endsWith("/kolo") || words.size() < 2
                        || !Main.subcommands().containsKey(words.get(1)) || words.get(1).equals(K8sEntry.NAME)) {
                    continue;
                }
                List<String> args = words.subList(2, words.size());
                Subcommand sub = Main.subcommands().get(words.get(1)).get();
                try {
                    CommandLine cli = new CommandLine(sub);
                    cli.parseArgs((sub instanceof RunCommand ? ProgramBoundary.normalize(args) : args)
                            .toArray(String[]::new));
                    checked++;
                } catch (CommandLine.ParameterException e) {
                    bad.add(b.where() + ": " + e.getMessage() + ": " + command);
                }
            }
        }
        assertEquals(List.of(), bad);
        assertTrue(checked >= 20, "only " + checked + " kolo commands found in the docs");
    }

    @Test
    void everyRelativeLinkLeadsToAFile() throws IOException {
        List<String> bad = new ArrayList<>();
        for (Path page : pages()) {
            Matcher m = LINK.matcher(Files.readString(page));
            while (m.find()) {
                String target = m.group(1);
                if (target.contains("://") || target.startsWith("mailto:")) {
                    continue;
                }
                if (!Files.exists(page.getParent().resolve(target))) {
                    bad.add(ROOT.relativize(page) + " -> " + target);
                }
            }
        }
        assertEquals(List.of(), bad);
    }

    @Test
    void theParsingHelpersSeeCommandsAsAShellDoes() {
        assertEquals(List.of("./kolo run -np 2 -- sh -c 'echo hi'", "ls"),
                commands("# a comment\n./kolo run -np 2 \\\n-- sh -c 'echo hi'   # trailing\n\nls\n"));
        assertEquals(List.of("./kolo", "run", "-cp", "a.jar:lib/*", "Main"),
                words("./kolo run -cp 'a.jar:lib/*' Main > out.txt"));
    }
}
