package io.kolo.examples;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.zip.GZIPInputStream;

/**
 * MNIST in its original IDX format (gzip): images as floats in [0, 1], labels as floats.
 *
 * <p>With the four standard files the training set (60,000) trains and t10k (10,000) tests. With only the
 * t10k files (what Kolo's tests use), the first 8,000 t10k images train and the last 2,000 test.
 */
record MnistData(float[][] trainImages, float[] trainLabels, float[][] testImages, float[] testLabels,
                 String description) {
    static final String TRAIN_IMAGES = "train-images-idx3-ubyte.gz";
    static final String TRAIN_LABELS = "train-labels-idx1-ubyte.gz";
    static final String TEST_IMAGES = "t10k-images-idx3-ubyte.gz";
    static final String TEST_LABELS = "t10k-labels-idx1-ubyte.gz";
    static final String MIRROR = "https://storage.googleapis.com/cvdf-datasets/mnist/";
    static final int T10K_TRAIN = 8000;

    static MnistData load(Path dir) throws IOException {
        if (!Files.exists(dir.resolve(TEST_IMAGES)) || !Files.exists(dir.resolve(TEST_LABELS))) {
            throw new IllegalArgumentException("no MNIST in " + dir + ": it needs at least " + TEST_IMAGES + " and "
                    + TEST_LABELS + " (and " + TRAIN_IMAGES + ", " + TRAIN_LABELS + " for the full set), from "
                    + MIRROR);
        }
        float[][] t10kImages = images(dir.resolve(TEST_IMAGES));
        float[] t10kLabels = labels(dir.resolve(TEST_LABELS));
        if (Files.exists(dir.resolve(TRAIN_IMAGES)) && Files.exists(dir.resolve(TRAIN_LABELS))) {
            return new MnistData(images(dir.resolve(TRAIN_IMAGES)), labels(dir.resolve(TRAIN_LABELS)), t10kImages,
                    t10kLabels, "train 60000 images, test t10k");
        }
        int n = t10kImages.length;
        return new MnistData(java.util.Arrays.copyOfRange(t10kImages, 0, T10K_TRAIN),
                java.util.Arrays.copyOfRange(t10kLabels, 0, T10K_TRAIN),
                java.util.Arrays.copyOfRange(t10kImages, T10K_TRAIN, n),
                java.util.Arrays.copyOfRange(t10kLabels, T10K_TRAIN, n),
                "only t10k found: first " + T10K_TRAIN + " images train, last " + (n - T10K_TRAIN) + " test");
    }

    /** Downloads the four standard files into {@code dir} (those not there yet). */
    static void download(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NORMAL).build();
        for (String name : new String[]{TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS}) {
            Path target = dir.resolve(name);
            if (Files.exists(target)) {
                continue;
            }
            HttpRequest request = HttpRequest.newBuilder(URI.create(MIRROR + name)).timeout(Duration.ofSeconds(60)).build();
            Path partial = dir.resolve(name + ".part");
            HttpResponse<Path> response = http.send(request, HttpResponse.BodyHandlers.ofFile(partial));
            if (response.statusCode() != 200) {
                Files.deleteIfExists(partial);
                throw new IOException("HTTP " + response.statusCode() + " for " + MIRROR + name);
            }
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    private static float[][] images(Path file) throws IOException {
        try (DataInputStream in = open(file)) {
            expectMagic(in, 0x803, file);
            int n = in.readInt();
            int rows = in.readInt();
            int cols = in.readInt();
            byte[] pixels = new byte[rows * cols];
            float[][] out = new float[n][rows * cols];
            for (int i = 0; i < n; i++) {
                in.readFully(pixels);
                for (int p = 0; p < pixels.length; p++) {
                    out[i][p] = (pixels[p] & 0xff) / 255f;
                }
            }
            return out;
        }
    }

    private static float[] labels(Path file) throws IOException {
        try (DataInputStream in = open(file)) {
            expectMagic(in, 0x801, file);
            int n = in.readInt();
            byte[] raw = new byte[n];
            in.readFully(raw);
            float[] out = new float[n];
            for (int i = 0; i < n; i++) {
                out[i] = raw[i];
            }
            return out;
        }
    }

    private static DataInputStream open(Path file) throws IOException {
        InputStream raw = Files.newInputStream(file);
        return new DataInputStream(new java.io.BufferedInputStream(new GZIPInputStream(raw, 1 << 16)));
    }

    private static void expectMagic(DataInputStream in, int magic, Path file) throws IOException {
        int actual = in.readInt();
        if (actual != magic) {
            throw new UncheckedIOException(new IOException(file + " is not an IDX file (magic 0x"
                    + Integer.toHexString(actual) + ", expected 0x" + Integer.toHexString(magic) + ")"));
        }
    }
}
