package io.kolo.bench;

/** The few drawing operations a plot needs, so one drawing code writes both SVG and PNG. */
interface Canvas {
    enum Anchor { START, MIDDLE, END }

    void line(double x1, double y1, double x2, double y2, String color, double width, boolean dashed);

    void polyline(double[] xs, double[] ys, String color, double width);

    void circle(double x, double y, double r, String color);

    void rect(double x, double y, double w, double h, String fill, String stroke);

    void text(double x, double y, String text, double size, Anchor anchor, String color, boolean bold);

    /** Text turned 90 degrees counter-clockwise (a y-axis title), centred on (x, y). */
    void verticalText(double x, double y, String text, double size, String color);
}
