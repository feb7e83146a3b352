package io.kolo.view;

/**
 * Writes JSON into a {@link StringBuilder}: kolo-core has no JSON library, and the view writes one fixed shape. Commas
 * are placed by the writer, strings are escaped for JSON and for a page's {@code <script>} element alike ({@code <},
 * {@code >}, {@code &} and the line separators U+2028/U+2029 as {@code \}{@code uXXXX}), and a non-finite number is
 * written as {@code null}.
 */
final class Json {
    private final StringBuilder out = new StringBuilder(4096);
    // Whether the value about to be written is the first of its object or array, per open level.
    private boolean[] first = new boolean[16];
    private int depth;
    private boolean afterName;

    Json beginObject() {
        separate();
        out.append('{');
        push();
        return this;
    }

    Json endObject() {
        depth--;
        out.append('}');
        return this;
    }

    Json beginArray() {
        separate();
        out.append('[');
        push();
        return this;
    }

    Json endArray() {
        depth--;
        out.append(']');
        return this;
    }

    Json name(String name) {
        separate();
        string(name);
        out.append(':');
        afterName = true;
        return this;
    }

    Json value(String s) {
        separate();
        if (s == null) {
            out.append("null");
        } else {
            string(s);
        }
        return this;
    }

    Json value(long v) {
        separate();
        out.append(v);
        return this;
    }

    Json value(double v) {
        separate();
        if (Double.isFinite(v)) {
            out.append(v);
        } else {
            out.append("null");
        }
        return this;
    }

    Json value(boolean v) {
        separate();
        out.append(v);
        return this;
    }

    Json value(Long v) {
        return v == null ? nullValue() : value(v.longValue());
    }

    Json value(Integer v) {
        return v == null ? nullValue() : value(v.longValue());
    }

    Json value(Double v) {
        return v == null ? nullValue() : value(v.doubleValue());
    }

    Json nullValue() {
        separate();
        out.append("null");
        return this;
    }

    /** {@code "name": value} in one call. */
    Json field(String name, String value) {
        return name(name).value(value);
    }

    Json field(String name, long value) {
        return name(name).value(value);
    }

    Json field(String name, double value) {
        return name(name).value(value);
    }

    Json field(String name, boolean value) {
        return name(name).value(value);
    }

    @Override
    public String toString() {
        return out.toString();
    }

    private void push() {
        if (depth == first.length) {
            first = java.util.Arrays.copyOf(first, depth * 2);
        }
        first[depth++] = true;
    }

    private void separate() {
        if (afterName) {
            afterName = false;
            return;
        }
        if (depth > 0) {
            if (!first[depth - 1]) {
                out.append(',');
            }
            first[depth - 1] = false;
        }
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
