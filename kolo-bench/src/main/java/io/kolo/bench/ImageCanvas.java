package io.kolo.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.geom.Path2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;

/** Draws into an image with Java2D (headless), for PNG output. */
final class ImageCanvas implements Canvas {
    private final BufferedImage image;
    private final Graphics2D g;

    ImageCanvas(int width, int height) {
        image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
    }

    @Override
    public void line(double x1, double y1, double x2, double y2, String color, double width, boolean dashed) {
        g.setColor(Color.decode(color));
        g.setStroke(dashed ? new BasicStroke((float) width, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10,
                new float[] {4, 4}, 0) : new BasicStroke((float) width));
        g.draw(new Line2D.Double(x1, y1, x2, y2));
    }

    @Override
    public void polyline(double[] xs, double[] ys, String color, double width) {
        Path2D.Double path = new Path2D.Double();
        for (int i = 0; i < xs.length; i++) {
            if (i == 0) {
                path.moveTo(xs[i], ys[i]);
            } else {
                path.lineTo(xs[i], ys[i]);
            }
        }
        g.setColor(Color.decode(color));
        g.setStroke(new BasicStroke((float) width, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
        g.draw(path);
    }

    @Override
    public void circle(double x, double y, double r, String color) {
        g.setColor(Color.decode(color));
        g.fill(new Ellipse2D.Double(x - r, y - r, 2 * r, 2 * r));
    }

    @Override
    public void rect(double x, double y, double w, double h, String fill, String stroke) {
        Rectangle2D.Double r = new Rectangle2D.Double(x, y, w, h);
        g.setColor(Color.decode(fill));
        g.fill(r);
        if (stroke != null) {
            g.setColor(Color.decode(stroke));
            g.setStroke(new BasicStroke(1));
            g.draw(r);
        }
    }

    @Override
    public void text(double x, double y, String text, double size, Anchor anchor, String color, boolean bold) {
        g.setFont(new Font(Font.SANS_SERIF, bold ? Font.BOLD : Font.PLAIN, (int) Math.round(size)));
        FontMetrics fm = g.getFontMetrics();
        double w = fm.stringWidth(text);
        double left = switch (anchor) {
            case START -> x;
            case MIDDLE -> x - w / 2;
            case END -> x - w;
        };
        g.setColor(Color.decode(color));
        g.drawString(text, (float) left, (float) y);
    }

    @Override
    public void verticalText(double x, double y, String text, double size, String color) {
        AffineTransform saved = g.getTransform();
        g.rotate(-Math.PI / 2, x, y);
        text(x, y, text, size, Anchor.MIDDLE, color, false);
        g.setTransform(saved);
    }

    BufferedImage finish() {
        g.dispose();
        return image;
    }
}
