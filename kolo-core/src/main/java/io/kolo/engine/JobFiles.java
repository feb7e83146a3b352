package io.kolo.engine;

import io.kolo.bootstrap.KoloSettings;

import java.nio.file.Path;
import java.util.Map;

/**
 * Where the files a job writes go ({@code KOLO_TIMELINE}, {@code KOLO_AUTOTUNE_LOG}): the named file, and siblings of
 * it for what would otherwise overwrite it. Each later generation of an elastic job writes beside it
 * ({@code timeline.gen1.json}): the next generation's rank 0 truncated the file, and with it the record of the failure
 * that caused the reset. Each process set's timeline goes beside it too ({@code timeline.set2.json}).
 */
final class JobFiles {
    private JobFiles() {
    }

    /** {@code file} as this environment's job writes it: with {@code .genG} after generation 0 of an elastic job. */
    static Path of(String file, Map<String, String> env) {
        if (file == null) {
            return null;
        }
        Path path = Path.of(file);
        int generation = KoloSettings.ELASTIC_GENERATION.ifSet(env).orElse(0);
        return generation > 0 ? tagged(path, "gen" + generation) : path;
    }

    /** {@code dir/name.ext} as {@code dir/name.TAG.ext} ({@code dir/name.TAG} without an extension). */
    static Path tagged(Path file, String tag) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String named = dot > 0 ? name.substring(0, dot) + "." + tag + name.substring(dot) : name + "." + tag;
        return file.resolveSibling(named);
    }
}
