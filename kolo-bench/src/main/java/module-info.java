/** {@code kolo bench}: Kolo against Open MPI and Gloo, tables, JSON and plots; the JMH kernel benchmarks. */
// XChart and JMH are automatic modules; the launcher, the target of the qualified export, is built after this module.
@SuppressWarnings({"requires-automatic", "module"})
module io.kolo.bench {
    requires io.kolo.core;
    requires com.fasterxml.jackson.databind;
    requires java.management;
    requires java.desktop;
    requires xchart;
    requires jmh.core;

    exports io.kolo.bench to io.kolo.launcher;
    opens io.kolo.bench.kernels;
}
