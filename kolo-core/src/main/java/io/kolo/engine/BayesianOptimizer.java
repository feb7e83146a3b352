package io.kolo.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Bayesian optimisation over the unit cube, as Horovod's autotuner does it: a Gaussian process (squared-exponential
 * kernel) fitted to the scores seen so far, and the next point the one of many random candidates with the largest
 * expected improvement. Scores are normalised before fitting, so the kernel's scale fits any unit of throughput. Small
 * by design: a few dozen samples at most, so a dense Cholesky solve per suggestion costs nothing next to a sample.
 */
final class BayesianOptimizer {
    private static final double LENGTH_SCALE = 0.25;
    /** Observation noise, in normalised score units: throughput samples on a shared machine vary a lot. */
    private static final double NOISE = 0.2;
    private static final int CANDIDATES = 2000;
    /** Exploration margin of expected improvement (in normalised score units). */
    private static final double XI = 0.01;

    /** Samples before the Gaussian process guides the search. */
    private static final int INITIAL = 3;

    private final int dims;
    private double[] mirrorNext;
    private final SplittableRandom random;
    private final List<double[]> xs = new ArrayList<>();
    private final List<Double> ys = new ArrayList<>();

    BayesianOptimizer(int dims, long seed) {
        this.dims = dims;
        this.random = new SplittableRandom(seed);
    }

    void observe(double[] x, double score) {
        xs.add(x.clone());
        ys.add(score);
    }

    int samples() {
        return xs.size();
    }

    /**
     * The best point seen, or null before any: the sample whose score the Gaussian process, fitted to all of them,
     * rates highest. Throughput on a shared machine is noisy, and the single highest score is often a lucky one; the
     * fitted mean weighs each sample against its neighbours.
     */
    double[] best() {
        if (xs.isEmpty()) {
            return null;
        }
        double[] y = normalised();
        double[][] l = cholesky(xs.size());
        double[] alpha = solveUpper(l, solveLower(l, y));
        int b = 0;
        double bestMean = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < xs.size(); i++) {
            double mu = 0;
            for (int j = 0; j < xs.size(); j++) {
                mu += kernel(xs.get(i), xs.get(j)) * alpha[j];
            }
            if (mu > bestMean) {
                bestMean = mu;
                b = i;
            }
        }
        return xs.get(b).clone();
    }

    /** The scores as zero mean, unit variance. */
    private double[] normalised() {
        int n = ys.size();
        double mean = 0;
        for (double y : ys) {
            mean += y;
        }
        mean /= n;
        double var = 0;
        for (double y : ys) {
            var += (y - mean) * (y - mean);
        }
        double sd = Math.sqrt(var / n);
        if (sd == 0) {
            sd = 1;
        }
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = (ys.get(i) - mean) / sd;
        }
        return out;
    }

    /**
     * The next point to try: a random one and then its mirror image ({@code 1 - x}, so that the first samples cover
     * both halves of every axis, both values of an on/off setting) until {@link #INITIAL} samples exist, then the one
     * with the largest expected improvement.
     */
    double[] suggest() {
        if (xs.size() < INITIAL) {
            if (mirrorNext != null) {
                double[] m = mirrorNext;
                mirrorNext = null;
                return m;
            }
            double[] x = randomPoint();
            mirrorNext = new double[dims];
            for (int d = 0; d < dims; d++) {
                mirrorNext[d] = 1 - x[d];
            }
            return x;
        }
        int n = xs.size();
        double[] y = normalised();
        double bestY = Double.NEGATIVE_INFINITY;
        for (double v : y) {
            bestY = Math.max(bestY, v);
        }
        double[][] l = cholesky(n);
        double[] alpha = solveUpper(l, solveLower(l, y));
        double[] bestX = null;
        double bestEi = Double.NEGATIVE_INFINITY;
        double[] k = new double[n];
        for (int c = 0; c < CANDIDATES; c++) {
            double[] x = randomPoint();
            for (int i = 0; i < n; i++) {
                k[i] = kernel(x, xs.get(i));
            }
            double mu = 0;
            for (int i = 0; i < n; i++) {
                mu += k[i] * alpha[i];
            }
            double[] v = solveLower(l, k);
            double s2 = 1.0;
            for (double vi : v) {
                s2 -= vi * vi;
            }
            double s = Math.sqrt(Math.max(s2, 1e-12));
            double z = (mu - bestY - XI) / s;
            double ei = (mu - bestY - XI) * cdf(z) + s * pdf(z);
            if (ei > bestEi) {
                bestEi = ei;
                bestX = x;
            }
        }
        return bestX;
    }

    private double[] randomPoint() {
        double[] x = new double[dims];
        for (int d = 0; d < dims; d++) {
            x[d] = random.nextDouble();
        }
        return x;
    }

    private static double kernel(double[] a, double[] b) {
        double d2 = 0;
        for (int i = 0; i < a.length; i++) {
            double d = a[i] - b[i];
            d2 += d * d;
        }
        return Math.exp(-d2 / (2 * LENGTH_SCALE * LENGTH_SCALE));
    }

    private double[][] cholesky(int n) {
        double[][] l = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j <= i; j++) {
                double sum = kernel(xs.get(i), xs.get(j)) + (i == j ? NOISE : 0);
                for (int k = 0; k < j; k++) {
                    sum -= l[i][k] * l[j][k];
                }
                l[i][j] = i == j ? Math.sqrt(Math.max(sum, 1e-12)) : sum / l[j][j];
            }
        }
        return l;
    }

    private static double[] solveLower(double[][] l, double[] b) {
        int n = b.length;
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            double s = b[i];
            for (int k = 0; k < i; k++) {
                s -= l[i][k] * x[k];
            }
            x[i] = s / l[i][i];
        }
        return x;
    }

    private static double[] solveUpper(double[][] l, double[] b) {
        int n = b.length;
        double[] x = new double[n];
        for (int i = n - 1; i >= 0; i--) {
            double s = b[i];
            for (int k = i + 1; k < n; k++) {
                s -= l[k][i] * x[k];
            }
            x[i] = s / l[i][i];
        }
        return x;
    }

    private static double pdf(double z) {
        return Math.exp(-z * z / 2) / Math.sqrt(2 * Math.PI);
    }

    /** Standard normal CDF (Abramowitz and Stegun 7.1.26 for erf; error below 1.5e-7). */
    private static double cdf(double z) {
        double x = Math.abs(z) / Math.sqrt(2);
        double t = 1 / (1 + 0.3275911 * x);
        double erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592)
                * t * Math.exp(-x * x);
        return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
    }
}
