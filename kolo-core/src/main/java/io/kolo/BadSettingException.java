package io.kolo;

/**
 * A {@code KOLO_*} variable holds a value Kolo cannot use. The message is one line naming the variable, its value and
 * what is expected, e.g. {@code KOLO_CYCLE_TIME='fast' is invalid: expected a non-negative number of milliseconds}.
 */
public class BadSettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    /** The {@code KOLO_*} variable at fault. */
    private final String variable;

    /** @param variable the {@code KOLO_*} variable at fault */
    public BadSettingException(String variable, String message) {
        super(message);
        this.variable = variable;
    }

    /** The variable at fault, e.g. {@code KOLO_CYCLE_TIME}. */
    public String variable() {
        return variable;
    }
}
