package io.kolo.spark.examples;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/** MNIST's IDX files (gzipped): images as 784 floats in [0, 1], labels as class indices. */
public final class MnistFiles {
    public static final String TEST_IMAGES = "t10k-images-idx3-ubyte.gz";
    public static final String TEST_LABELS = "t10k-labels-idx1-ubyte.gz";

    private MnistFiles() {
    }

    public static float[][] images(Path gz) throws IOException {
        try (DataInputStream in = open(gz)) {
            in.readInt();
            int n = in.readInt();
            int pixels = in.readInt() * in.readInt();
            float[][] out = new float[n][pixels];
            byte[] raw = new byte[pixels];
            for (int i = 0; i < n; i++) {
                in.readFully(raw);
                for (int p = 0; p < pixels; p++) {
                    out[i][p] = (raw[p] & 0xff) / 255f;
                }
            }
            return out;
        }
    }

    public static int[] labels(Path gz) throws IOException {
        try (DataInputStream in = open(gz)) {
            in.readInt();
            int n = in.readInt();
            int[] out = new int[n];
            for (int i = 0; i < n; i++) {
                out[i] = in.readUnsignedByte();
            }
            return out;
        }
    }

    private static DataInputStream open(Path gz) throws IOException {
        return new DataInputStream(new GZIPInputStream(new BufferedInputStream(Files.newInputStream(gz))));
    }
}
