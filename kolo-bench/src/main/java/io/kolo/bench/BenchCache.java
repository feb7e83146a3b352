package io.kolo.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * Where the peers' benchmark sources are unpacked and the MPI program is compiled:
 * {@code $XDG_CACHE_HOME/kolo/bench} or {@code ~/.cache/kolo/bench}. File names carry a hash of the source,
 * so a changed source is recompiled and concurrent runs never see a half-written file.
 */
final class BenchCache {
    private final Path dir;

    BenchCache(Path dir) {
        this.dir = dir;
    }

    static BenchCache fromEnvironment(Map<String, String> env) {
        String xdg = env.get("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg)
                : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".cache");
        return new BenchCache(base.resolve("kolo").resolve("bench"));
    }

    Path dir() {
        return dir;
    }

    /** A bundled resource, unpacked as {@code stem-HASH.ext}; the same content is written once. */
    Path resource(String name) throws IOException {
        byte[] content;
        try (InputStream in = BenchCache.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("resource " + name + " is missing from the kolo-bench jar");
            }
            content = in.readAllBytes();
        }
        int dot = name.lastIndexOf('.');
        Path target = dir.resolve(name.substring(0, dot) + "-" + hash(content) + name.substring(dot));
        if (!Files.exists(target)) {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, name, ".tmp");
            Files.write(tmp, content);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }

    static String hash(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content), 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
