package io.kolo.spark;

import io.kolo.KoloException;

/**
 * A Kolo job on Spark could not start or did not finish: its message is one line saying what went wrong (a rank's
 * exception, too few task slots, a setting Spark's barrier mode refuses) and what to do; the cause is Spark's own
 * exception, with the failed rank's exception below it where Spark could carry it.
 */
public class KoloSparkException extends KoloException {
    private static final long serialVersionUID = 1L;

    public KoloSparkException(String message, Throwable cause) {
        super(message, cause);
    }
}
