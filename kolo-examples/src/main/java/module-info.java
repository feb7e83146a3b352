/** Runnable examples: {@code kolo run -np N --example NAME}. */
module io.kolo.examples {
    requires io.kolo.core;
    requires io.kolo.djl;
    requires java.management;
    requires java.net.http;
    requires info.picocli;
    requires com.fasterxml.jackson.databind;

    exports io.kolo.examples;
    opens io.kolo.examples to info.picocli;
}
