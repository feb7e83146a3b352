package io.kolo.launcher.tools;

import io.kolo.launcher.Subcommand;
import io.kolo.launcher.job.UsageException;

import io.kolo.bootstrap.IoReason;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * {@code kolo keys generate --out DIR}: the files password-less ssh between a job's hosts needs, as a
 * managed platform provisions them: {@code id_ed25519} (mode 600), {@code id_ed25519.pub} and
 * {@code authorized_keys} holding it (644), in a directory of mode 700 — the modes sshd's StrictModes
 * accepts. Mount or copy DIR as {@code ~/.ssh} on every host.
 */
@Command(name = "keys", addMethodSubcommands = false, sortOptions = false,
        description = "Make an ed25519 key pair and authorized_keys for password-less ssh between a job's hosts.",
        customSynopsis = "kolo keys generate --out DIR [--comment TEXT] [--force]")
public final class KeysCommand implements Subcommand {
    @Parameters(index = "0", paramLabel = "generate", description = "The action (only 'generate').")
    String action;

    // Checked in call(), after the action: picocli would report a missing --out before a mistyped action.
    @Option(names = "--out", paramLabel = "DIR", description = "Directory to write (made if missing; required).")
    Path out;

    @Option(names = "--comment", paramLabel = "TEXT", defaultValue = "kolo-job",
            description = "Comment on the public key (default: ${DEFAULT-VALUE}).")
    String comment = "kolo-job";

    @Option(names = "--force", description = "Overwrite existing key files.")
    boolean force;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Override
    public int call(PrintStream stdout, PrintStream err, boolean installShutdownHook) {
        if (!"generate".equals(action)) {
            throw new UsageException("unknown keys action '" + action + "' (expected: kolo keys generate --out DIR)");
        }
        if (out == null) {
            throw new UsageException("missing --out DIR (where to write the keys)");
        }
        if (comment.contains("\n")) {
            throw new UsageException("--comment must be one line");
        }
        SshKeys keys = SshKeys.generate(comment);
        try {
            Files.createDirectories(out);
            Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwx------"));
            write(out.resolve("id_ed25519"), keys.privateKeyPem(), "rw-------");
            write(out.resolve("id_ed25519.pub"), keys.publicKeyLine(), "rw-r--r--");
            write(out.resolve("authorized_keys"), keys.publicKeyLine(), "rw-r--r--");
        } catch (FileAlreadyExistsException e) {
            throw new UsageException(e.getFile() + " already exists (use --force to replace the keys)");
        } catch (IOException e) {
            err.println("kolo: cannot write keys to " + out + ": " + IoReason.withFile(e, out));
            return 1;
        } catch (UnsupportedOperationException e) {
            // A file system without POSIX permissions: ssh would refuse keys it cannot see are private.
            err.println("kolo: cannot write keys to " + out + ": its file system has no POSIX permissions");
            return 1;
        }
        stdout.println("kolo: wrote " + out.resolve("id_ed25519") + ", id_ed25519.pub and authorized_keys");
        return 0;
    }

    private void write(Path file, String content, String mode) throws IOException {
        if (force) {
            Files.deleteIfExists(file);
        }
        // Created with its final mode so the private key is never readable by others, not even briefly.
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(mode)));
        Files.writeString(file, content, StandardCharsets.UTF_8, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
    }
}
