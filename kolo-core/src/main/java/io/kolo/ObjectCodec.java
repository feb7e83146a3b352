package io.kolo;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;

/** Java serialisation for the object collectives ({@link Communicator#broadcastObject}, {@code allgatherObject}). */
final class ObjectCodec {
    private ObjectCodec() {
    }

    static byte[] serialize(Object o) {
        try (ByteArrayOutputStream bytes = new ByteArrayOutputStream(); ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(o);
            out.flush();
            return bytes.toByteArray();
        } catch (java.io.NotSerializableException e) {
            // Its message is only the class at fault.
            String at = e.getMessage();
            throw new IllegalArgumentException("cannot serialise " + o.getClass().getName() + ": "
                    + (o.getClass().getName().equals(at) ? "it is" : "it holds a " + at + ", which is")
                    + " not Serializable", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot serialise " + o.getClass().getName() + ": " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T deserialize(byte[] bytes) {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
            return (T) in.readObject();
        } catch (IOException | ClassNotFoundException e) {
            throw new KoloException("cannot deserialise an object from another rank: " + e.getMessage(), e);
        }
    }

}
