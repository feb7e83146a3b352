package io.kolo.spark;

import ai.djl.MalformedModelException;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Block;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/** A trained block's parameters as bytes (DJL's own parameter format), to travel from rank 0 to the driver and on. */
final class Parameters {
    private Parameters() {
    }

    static byte[] save(Block block) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            block.saveParameters(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static void load(Block block, NDManager manager, byte[] parameters) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(parameters))) {
            block.loadParameters(manager, in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (MalformedModelException e) {
            throw new IllegalStateException("the trained parameters do not fit the block the factory makes: "
                    + e.getMessage(), e);
        }
    }
}
