/** The {@code kolo} command: {@code kolo run}, {@code kolo bench}, keys and hostfiles ({@link io.kolo.launcher.Main}). */
module io.kolo.launcher {
    requires io.kolo.core;
    requires io.kolo.bench;
    requires info.picocli;
    requires jdk.unsupported;

    opens io.kolo.launcher to info.picocli;
    opens io.kolo.launcher.tools to info.picocli;
}
