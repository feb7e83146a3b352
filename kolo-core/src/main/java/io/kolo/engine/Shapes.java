package io.kolo.engine;

/** Shape arithmetic shared by the engine's classes. */
final class Shapes {
    private Shapes() {
    }

    static long elements(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /** Elements in one row (everything but the first dimension); 1 for a 1-d or 0-d shape. */
    static long rowElements(long[] shape) {
        long n = 1;
        for (int i = 1; i < shape.length; i++) {
            n *= shape[i];
        }
        return n;
    }

    static long firstDim(long[] shape) {
        return shape.length == 0 ? 1 : shape[0];
    }

    static long[] withFirstDim(long[] shape, long first) {
        long[] s = shape.length == 0 ? new long[1] : shape.clone();
        s[0] = first;
        return s;
    }
}
