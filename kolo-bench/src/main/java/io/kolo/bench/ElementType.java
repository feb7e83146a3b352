package io.kolo.bench;

import io.kolo.DataType;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The element types {@code --dtype} accepts, with their names in Kolo, MPI and PyTorch. */
public enum ElementType {
    F32(DataType.FLOAT32, "float", "float32"),
    F64(DataType.FLOAT64, "double", "float64"),
    BF16(DataType.BFLOAT16, null, "bfloat16"),
    F16(DataType.FLOAT16, null, "float16"),
    I32(DataType.INT32, "int", "int32"),
    I64(DataType.INT64, "long", "int64");

    private final DataType koloType;
    private final String cType;
    private final String torchType;

    ElementType(DataType koloType, String cType, String torchType) {
        this.koloType = koloType;
        this.cType = cType;
        this.torchType = torchType;
    }

    public DataType koloType() {
        return koloType;
    }

    public int byteSize() {
        return koloType.byteSize();
    }

    /** The C type the MPI peer uses, or null when MPI has no standard type for it (bf16, fp16). */
    public String cType() {
        return cType;
    }

    public String torchType() {
        return torchType;
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static ElementType parse(String name) {
        for (ElementType t : values()) {
            if (t.id().equals(name.toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown --dtype '" + name + "'; use one of "
                + Arrays.stream(values()).map(ElementType::id).collect(Collectors.joining(", ")));
    }
}
