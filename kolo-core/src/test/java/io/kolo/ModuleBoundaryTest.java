package io.kolo;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What kolo-core shows the world: {@code io.kolo}, {@code io.kolo.elastic} and {@code io.kolo.launch} to everyone, an
 * internal package only to the module that needs it.
 */
class ModuleBoundaryTest {

    @Test
    void onlyTheApiIsExportedAndInternalsOnlyToTheModulesThatNeedThem() throws IOException {
        ModuleDescriptor module;
        try (InputStream in = Files.newInputStream(Path.of("target/classes/module-info.class"))) {
            module = ModuleDescriptor.read(in);
        }
        Map<String, Set<String>> exports = new TreeMap<>();
        for (ModuleDescriptor.Exports e : module.exports()) {
            exports.put(e.source(), e.isQualified() ? e.targets() : Set.of("*"));
        }
        assertEquals(Map.of("io.kolo", Set.of("*"), "io.kolo.elastic", Set.of("*"), "io.kolo.launch", Set.of("*"),
                // kolo-bench: the rendezvous server's request counts for kolo bench scale.
                "io.kolo.bootstrap", Set.of("io.kolo.launcher", "io.kolo.bench"),
                "io.kolo.transport", Set.of("io.kolo.launcher"), "io.kolo.collective", Set.of("io.kolo.bench"),
                // kolo run serves the job view from the launcher.
                "io.kolo.view", Set.of("io.kolo.launcher")),
                exports);
        assertTrue(module.requires().stream().allMatch(r -> r.name().startsWith("java.") || r.name().startsWith("jdk.")),
                "kolo-core depends on the JDK alone: " + module.requires());
    }

    /** No public signature of the API names a type of an internal package, so users never need one. */
    @Test
    void thePublicApiNamesNoInternalType() throws Exception {
        List<String> leaks = new ArrayList<>();
        for (String pkg : PUBLIC) {
            try (Stream<Path> files = Files.list(Path.of("target/classes/" + pkg.replace('.', '/')))) {
                for (Path f : files.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
                    leaks.addAll(leaks(Class.forName(pkg + "." + f.getFileName().toString().replace(".class", ""))));
                }
            }
        }
        assertEquals(List.of(), leaks);
    }

    private static final Set<String> PUBLIC = Set.of("io.kolo", "io.kolo.elastic", "io.kolo.launch");

    /** What {@code c}'s public constructors and methods name from outside the public packages. */
    private static List<String> leaks(Class<?> c) {
        List<String> leaks = new ArrayList<>();
        boolean visible = Modifier.isPublic(c.getModifiers())
                && (c.getEnclosingClass() == null || Modifier.isPublic(c.getEnclosingClass().getModifiers()));
        if (!visible) {
            return leaks;
        }
        List<Executable> members = new ArrayList<>(List.of(c.getConstructors()));
        members.addAll(List.of(c.getMethods()));
        for (Executable m : members) {
            if (m.getDeclaringClass() != c) {
                continue;
            }
            List<Type> types = new ArrayList<>(List.of(m.getGenericParameterTypes()));
            if (m instanceof Method method) {
                types.add(method.getGenericReturnType());
            }
            for (Type t : types) {
                for (String name : names(t)) {
                    String pkg = name.substring(0, name.lastIndexOf('.'));
                    if (name.startsWith("io.kolo.") && !PUBLIC.contains(pkg)) {
                        leaks.add(c.getSimpleName() + "." + m.getName() + " names " + name);
                    }
                }
            }
        }
        return leaks;
    }

    private static List<String> names(Type t) {
        if (t instanceof Class<?> c) {
            while (c.isArray()) {
                c = c.getComponentType();
            }
            // A nested type's package is its outer class's.
            return List.of(c.getPackageName() + "." + c.getSimpleName());
        }
        if (t instanceof ParameterizedType p) {
            List<String> all = new ArrayList<>(names(p.getRawType()));
            for (Type a : p.getActualTypeArguments()) {
                all.addAll(names(a));
            }
            return all;
        }
        return List.of();
    }
}
