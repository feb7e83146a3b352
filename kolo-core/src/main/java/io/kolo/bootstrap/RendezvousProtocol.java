package io.kolo.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Wire format shared by {@link RendezvousServer} and {@link RendezvousClient}, spoken only after the
 * handshake. A request is an op byte followed by length-prefixed UTF-8 strings (and a timeout in ms for
 * GET; a prefix, a count and a timeout for GET_EACH, answered with PRESENT and the count's values, or ABSENT and the
 * index of the first key still missing); the server answers each request before reading the next, so one connection never needs request
 * ids.
 */
final class RendezvousProtocol {
    static final String PURPOSE = "rendezvous";

    static final byte PUT = 1;
    static final byte PUT_IF_ABSENT = 2;
    static final byte TRY_GET = 3;
    static final byte GET = 4;
    static final byte GET_EACH = 5;

    static final byte OK = 0;
    static final byte ABSENT = 1;
    static final byte PRESENT = 2;
    static final byte STORED = 3;

    // Keys are short and values are addresses or one-line messages; the cap keeps a buggy (but
    // authenticated) peer from making the server allocate an arbitrary buffer.
    static final int MAX_STRING_BYTES = 1 << 20;
    /** The most keys one GET_EACH names: far above any job's ranks, far below what would exhaust the server. */
    static final int MAX_EACH = 1 << 20;

    private RendezvousProtocol() {
    }

    /** Loads this class now: see {@link RendezvousServer}'s static initialiser. */
    static void load() {
    }

    static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("rendezvous keys and values are limited to " + MAX_STRING_BYTES
                    + " bytes, got " + bytes.length);
        }
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    static String readString(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length < 0 || length > MAX_STRING_BYTES) {
            throw new IOException("bad string length " + length + " in rendezvous message");
        }
        byte[] bytes = in.readNBytes(length);
        if (bytes.length != length) {
            throw new EOFException("connection closed in the middle of a rendezvous message");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
