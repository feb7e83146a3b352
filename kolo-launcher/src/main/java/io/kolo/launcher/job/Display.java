package io.kolo.launcher.job;

import java.util.List;

/**
 * What the launcher prints besides the ranks' output: the map of ranks to hosts (--display-map), timestamps
 * (--timestamp-output), and the accepted options it ignores (under --verbose).
 */
public record Display(boolean map, boolean timestamps, List<String> ignored) {
    static final Display PLAIN = new Display(false, false, List.of());
}
