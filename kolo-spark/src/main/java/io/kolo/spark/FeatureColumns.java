package io.kolo.spark;

import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.VectorUDT;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import java.util.Arrays;
import java.util.List;

/**
 * The estimator's and the model's columns: checked against a DataFrame's schema on the driver before any task starts, and read from
 * rows on the executors. Features are a Spark ML {@code Vector} or an {@code array<float>} / {@code array<double>};
 * labels any numeric type.
 */
final class FeatureColumns {
    static final String FEATURES_EXPECTED = "a Spark ML Vector or array<float> / array<double>";

    private FeatureColumns() {
    }

    /** @throws IllegalArgumentException naming the column, its type and the expected type */
    static void checkFeatures(StructType schema, String column) {
        DataType type = field(schema, column).dataType();
        boolean ok = type instanceof VectorUDT
                || type instanceof ArrayType a && (a.elementType() == DataTypes.FloatType
                || a.elementType() == DataTypes.DoubleType);
        if (!ok) {
            throw new IllegalArgumentException("feature column '" + column + "' is " + type.simpleString()
                    + ": expected " + FEATURES_EXPECTED);
        }
    }

    static void checkLabel(StructType schema, String column) {
        DataType type = field(schema, column).dataType();
        if (!(type instanceof NumericType)) {
            throw new IllegalArgumentException("label column '" + column + "' is " + type.simpleString()
                    + ": expected a numeric type (the class index for classification)");
        }
    }

    /** @throws IllegalArgumentException naming the column and its type unless it is boolean */
    static void checkValidation(StructType schema, String column) {
        DataType type = field(schema, column).dataType();
        if (type != DataTypes.BooleanType) {
            throw new IllegalArgumentException("validation column '" + column + "' is " + type.simpleString()
                    + ": expected boolean (true for the rows to validate on)");
        }
    }

    /** {@code schema} with a double column {@code prediction} added; it must not be there already. */
    static StructType withPrediction(StructType schema, String prediction) {
        if (Arrays.asList(schema.fieldNames()).contains(prediction)) {
            throw new IllegalArgumentException("prediction column '" + prediction + "' exists already in the"
                    + " DataFrame: set another predictionCol or drop the column");
        }
        return schema.add(prediction, DataTypes.DoubleType);
    }

    private static StructField field(StructType schema, String column) {
        List<String> names = Arrays.asList(schema.fieldNames());
        if (!names.contains(column)) {
            throw new IllegalArgumentException("no column '" + column + "' in the DataFrame (its columns: "
                    + String.join(", ", names) + ")");
        }
        return schema.apply(column);
    }

    static float[] features(Row row, int index) {
        Object value = row.get(index);
        if (value instanceof Vector v) {
            double[] d = v.toArray();
            float[] f = new float[d.length];
            for (int i = 0; i < d.length; i++) {
                f[i] = (float) d[i];
            }
            return f;
        }
        List<Object> list = row.getList(index);
        float[] f = new float[list.size()];
        for (int i = 0; i < f.length; i++) {
            f[i] = ((Number) list.get(i)).floatValue();
        }
        return f;
    }

    static float label(Row row, int index) {
        return ((Number) row.get(index)).floatValue();
    }
}
