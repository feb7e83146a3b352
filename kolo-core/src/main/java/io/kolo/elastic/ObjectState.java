package io.kolo.elastic;

import io.kolo.Kolo;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Named {@link Serializable} values as {@link ElasticState} (Horovod's {@code ObjectState}): the epoch, the batch,
 * a {@code float[]} of weights, anything serializable. A commit saves a deep copy (serialized), so later changes to
 * an array in place do not reach the committed copy.
 *
 * <pre>{@code
 * ObjectState state = new ObjectState(Map.of("step", 0L, "weights", new float[100]));
 * long step = state.get("step");
 * state.set("step", step + 1);
 * state.commit();
 * }</pre>
 */
public class ObjectState extends ElasticState {
    private final Map<String, Serializable> values = new LinkedHashMap<>();
    private byte[] saved;

    /** The initial values, committed at once. */
    public ObjectState(Map<String, ? extends Serializable> initial) {
        values.putAll(initial);
        // As save() does, without calling a method a subclass may override before it is constructed.
        saved = serialize(new LinkedHashMap<>(values));
    }

    /** The value named {@code name}, or null. */
    @SuppressWarnings("unchecked")
    public synchronized <T extends Serializable> T get(String name) {
        return (T) values.get(name);
    }

    /** Sets (or adds) the value named {@code name}; committed at the next {@link #commit()}. */
    public synchronized void set(String name, Serializable value) {
        values.put(name, value);
    }

    /** The names of the values. */
    public synchronized Set<String> names() {
        return Set.copyOf(values.keySet());
    }

    @Override
    public synchronized void save() {
        saved = serialize(new LinkedHashMap<>(values));
    }

    @Override
    public synchronized void restore() {
        values.clear();
        values.putAll(deserialize(saved));
    }

    @Override
    public synchronized void sync() {
        if (!Kolo.isInitialized() || Kolo.size() == 1) {
            save();
            return;
        }
        LinkedHashMap<String, Serializable> root = Kolo.broadcastObject(new LinkedHashMap<>(values), 0);
        values.clear();
        values.putAll(root);
        save();
    }

    private static byte[] serialize(LinkedHashMap<String, Serializable> map) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(map);
        } catch (IOException e) {
            throw new UncheckedIOException("an ObjectState value cannot be serialized: " + e.getMessage(), e);
        }
        return bytes.toByteArray();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Serializable> deserialize(byte[] saved) {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(saved))) {
            return (Map<String, Serializable>) in.readObject();
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("the committed ObjectState cannot be read back: " + e, e);
        }
    }
}
