package io.kolo.bootstrap;

import io.kolo.BadSettingException;
import io.kolo.KoloException;
import io.kolo.launch.JobSecret;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A user's long-lived secret in {@code ~/.kolo/secret} (hex, mode 600), like an SSH key: on a home
 * directory every host shares, it lets ranks on several hosts started by mpirun or srun authenticate
 * without passing a secret through the launcher. Each job uses its own secret derived from it and the
 * launch's job id.
 */
final class UserSecret {
    static final String HOW_TO_CREATE = "umask 077; mkdir -p ~/.kolo; openssl rand -hex 32 > ~/.kolo/secret";
    private static final Set<PosixFilePermission> OPEN_TO_OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private UserSecret() {
    }

    static Path path(Map<String, String> env) {
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        return Path.of(home, ".kolo", "secret");
    }

    /** The secret, or empty when the file does not exist. */
    static Optional<JobSecret> load(Map<String, String> env) {
        Path file = path(env);
        try {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
            if (perms.stream().anyMatch(OPEN_TO_OTHERS::contains)) {
                throw new BadSettingException("KOLO_SECRET", file + " can be read by other users: chmod 600 " + file);
            }
            String hex = Files.readString(file).trim();
            try {
                return Optional.of(JobSecret.fromHex(hex));
            } catch (IllegalArgumentException e) {
                throw new BadSettingException("KOLO_SECRET", file + ": " + e.getMessage().replace("KOLO_SECRET",
                        "the secret") + " (" + HOW_TO_CREATE + ")");
            }
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new KoloException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
