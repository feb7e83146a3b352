package io.kolo.view;

/**
 * Writes Prometheus' text exposition format 0.0.4: a {@code # HELP} and {@code # TYPE} line per family, then its
 * samples, label values escaped as the format says (backslash, double quote, newline).
 */
final class Prometheus {
    private final StringBuilder out = new StringBuilder(4096);

    void family(String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ')
                .append(help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    /** One sample; {@code labels} are name, value, name, value... */
    void sample(String name, double value, String... labels) {
        out.append(name);
        if (labels.length > 0) {
            out.append('{');
            for (int i = 0; i < labels.length; i += 2) {
                if (i > 0) {
                    out.append(',');
                }
                out.append(labels[i]).append("=\"").append(labels[i + 1].replace("\\", "\\\\")
                        .replace("\"", "\\\"").replace("\n", "\\n")).append('"');
            }
            out.append('}');
        }
        out.append(' ').append(number(value)).append('\n');
    }

    private static String number(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return Double.toString(v);
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
