package io.kolo.launcher.job;

import java.util.List;

/**
 * What the launcher shows besides the ranks' output: the map of ranks to hosts (--display-map), timestamps
 * (--timestamp-output), the accepted options it ignores (under --verbose), and the job view (--dashboard, --report).
 */
public record Display(boolean map, boolean timestamps, List<String> ignored, ViewPlan view) {
    static final Display PLAIN = new Display(false, false, List.of(), ViewPlan.NONE);

    public Display {
        view = view == null ? ViewPlan.NONE : view;
    }
}
