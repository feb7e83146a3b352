package io.kolo.bootstrap;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The last reply to each table read (GET_EACH), by prefix and count, with the store's list it encodes: every rank
 * reads the same table, so n readers cost one encoding while the store hands out the same list. Owned by the
 * rendezvous server's serving thread.
 */
final class EncodedTables {
    /** As {@link InMemoryStore}'s own limit on complete tables: far more than a job reads at once. */
    private static final int MAX_ENCODED_TABLES = 64;

    private final Map<String, EncodedTable> last = new HashMap<>();

    /** {@code table}'s GET_EACH reply, encoded again only when the store's list is not the one encoded last. */
    ByteBuffer reply(String prefix, int count, List<String> table) {
        String key = prefix + '\0' + count;
        EncodedTable encoded = last.get(key);
        if (encoded == null || encoded.table != table) {
            if (last.size() >= MAX_ENCODED_TABLES) {
                last.clear();
            }
            encoded = new EncodedTable(table, RendezvousProtocol.each(table));
            last.put(key, encoded);
        }
        // Each connection sends from its own position; the bytes are shared and never written.
        return encoded.reply.duplicate();
    }

    /** A table as the store handed it out, and its GET_EACH reply. */
    private record EncodedTable(List<String> table, ByteBuffer reply) {
    }
}
