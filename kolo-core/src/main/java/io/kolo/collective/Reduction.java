package io.kolo.collective;

/**
 * Element-wise combination performed by reduction kernels. AVERAGE is not here: the engine turns it
 * into SUM plus a scale factor. BAND/BOR exist for the engine's bit-vector agreement (INT64 only).
 */
public enum Reduction {
    SUM, PRODUCT, MIN, MAX, BAND, BOR
}
