package io.kolo.bench;

import java.util.Locale;

/** Writes an SVG document. */
final class SvgCanvas implements Canvas {
    private final StringBuilder sb = new StringBuilder();

    SvgCanvas(int width, int height) {
        sb.append(String.format(Locale.ROOT, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>%n"
                + "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                + "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">%n", width, height, width, height));
    }

    @Override
    public void line(double x1, double y1, double x2, double y2, String color, double width, boolean dashed) {
        sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                + "stroke-width=\"%.1f\"%s/>%n", x1, y1, x2, y2, color, width, dashed ? " stroke-dasharray=\"4 4\"" : ""));
    }

    @Override
    public void polyline(double[] xs, double[] ys, String color, double width) {
        sb.append("<polyline fill=\"none\" stroke=\"").append(color).append("\" stroke-width=\"")
                .append(String.format(Locale.ROOT, "%.1f", width)).append("\" points=\"");
        for (int i = 0; i < xs.length; i++) {
            sb.append(String.format(Locale.ROOT, "%s%.1f,%.1f", i == 0 ? "" : " ", xs[i], ys[i]));
        }
        sb.append("\"/>\n");
    }

    @Override
    public void circle(double x, double y, double r, String color) {
        sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>%n", x, y, r, color));
    }

    @Override
    public void rect(double x, double y, double w, double h, String fill, String stroke) {
        sb.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                + "stroke=\"%s\"/>%n", x, y, w, h, fill, stroke == null ? "none" : stroke));
    }

    @Override
    public void text(double x, double y, String text, double size, Anchor anchor, String color, boolean bold) {
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"%s\" "
                        + "fill=\"%s\"%s>%s</text>%n", x, y, size,
                switch (anchor) {
                    case START -> "start";
                    case MIDDLE -> "middle";
                    case END -> "end";
                }, color, bold ? " font-weight=\"bold\"" : "", escape(text)));
    }

    @Override
    public void verticalText(double x, double y, String text, double size, String color) {
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"middle\" "
                + "fill=\"%s\" transform=\"rotate(-90 %.1f %.1f)\">%s</text>%n", x, y, size, color, x, y, escape(text)));
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    String finish() {
        return sb + "</svg>\n";
    }
}
