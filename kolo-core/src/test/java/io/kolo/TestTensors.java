package io.kolo;

import java.util.function.IntToLongFunction;

/** Builds tensors of any type from integer values and reads them back as doubles. */
final class TestTensors {
    private TestTensors() {
    }

    static Tensor filled(DataType type, int len, IntToLongFunction value) {
        return switch (type) {
            case INT8, UINT8 -> {
                byte[] a = new byte[len];
                for (int i = 0; i < len; i++) {
                    a[i] = (byte) value.applyAsLong(i);
                }
                yield Tensor.of(a, type);
            }
            case INT16 -> {
                short[] a = new short[len];
                for (int i = 0; i < len; i++) {
                    a[i] = (short) value.applyAsLong(i);
                }
                yield Tensor.of(a);
            }
            case FLOAT16, BFLOAT16 -> {
                short[] a = new short[len];
                for (int i = 0; i < len; i++) {
                    float f = value.applyAsLong(i);
                    a[i] = type == DataType.FLOAT16 ? Float16.fromFloat(f) : BFloat16.fromFloat(f);
                }
                yield Tensor.of(a, type);
            }
            case INT32 -> {
                int[] a = new int[len];
                for (int i = 0; i < len; i++) {
                    a[i] = (int) value.applyAsLong(i);
                }
                yield Tensor.of(a);
            }
            case INT64 -> {
                long[] a = new long[len];
                for (int i = 0; i < len; i++) {
                    a[i] = value.applyAsLong(i);
                }
                yield Tensor.of(a);
            }
            case FLOAT32 -> {
                float[] a = new float[len];
                for (int i = 0; i < len; i++) {
                    a[i] = value.applyAsLong(i);
                }
                yield Tensor.of(a);
            }
            case FLOAT64 -> {
                double[] a = new double[len];
                for (int i = 0; i < len; i++) {
                    a[i] = value.applyAsLong(i);
                }
                yield Tensor.of(a);
            }
        };
    }

    static double[] values(Tensor t) {
        int n = (int) t.elements();
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = switch (t.dataType()) {
                case INT8 -> t.bytes()[i];
                case UINT8 -> t.bytes()[i] & 0xff;
                case INT16 -> t.shorts()[i];
                case FLOAT16 -> Float16.toFloat(t.shorts()[i]);
                case BFLOAT16 -> BFloat16.toFloat(t.shorts()[i]);
                case INT32 -> t.ints()[i];
                case INT64 -> t.longs()[i];
                case FLOAT32 -> t.floats()[i];
                case FLOAT64 -> t.doubles()[i];
            };
        }
        return out;
    }
}
