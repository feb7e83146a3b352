package io.kolo.bootstrap;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

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

    /** The longest request: a PUT of the longest key and value. */
    static final int MAX_REQUEST_BYTES = 1 + 2 * (4 + MAX_STRING_BYTES);

    /**
     * One request as a server reads it off its buffer: the fields its op carries (the others null or 0), and its size
     * on the wire.
     */
    record Request(byte op, String key, String value, int count, long timeoutMs, int bytes) {
    }

    /**
     * The whole request at {@code in}'s position, which it then passes; null, with the position unchanged, while the
     * request is not all there yet.
     *
     * @throws IOException the bytes are no request (an unknown op, a length or key count out of bounds)
     */
    static Request decode(ByteBuffer in) throws IOException {
        int start = in.position();
        Request r = tryDecode(in);
        if (r == null) {
            in.position(start);
        }
        return r;
    }

    private static Request tryDecode(ByteBuffer in) throws IOException {
        int start = in.position();
        if (!in.hasRemaining()) {
            return null;
        }
        byte op = in.get();
        String key;
        String value = null;
        int count = 0;
        long timeoutMs = 0;
        switch (op) {
            case PUT, PUT_IF_ABSENT -> {
                key = decodeString(in);
                value = key == null ? null : decodeString(in);
                if (value == null) {
                    return null;
                }
            }
            case TRY_GET -> {
                key = decodeString(in);
                if (key == null) {
                    return null;
                }
            }
            case GET -> {
                key = decodeString(in);
                if (key == null || in.remaining() < Long.BYTES) {
                    return null;
                }
                timeoutMs = in.getLong();
            }
            case GET_EACH -> {
                key = decodeString(in);
                if (key == null || in.remaining() < Integer.BYTES + Long.BYTES) {
                    return null;
                }
                count = in.getInt();
                timeoutMs = in.getLong();
                if (count < 0 || count > MAX_EACH) {
                    throw new IOException("bad key count " + count + " in rendezvous request");
                }
            }
            default -> throw new IOException("unknown rendezvous request " + op);
        }
        return new Request(op, key, value, count, Math.max(0, timeoutMs), in.position() - start);
    }

    private static String decodeString(ByteBuffer in) throws IOException {
        if (in.remaining() < Integer.BYTES) {
            return null;
        }
        int length = in.getInt();
        if (length < 0 || length > MAX_STRING_BYTES) {
            throw new IOException("bad string length " + length + " in rendezvous message");
        }
        if (in.remaining() < length) {
            return null;
        }
        byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** A reply of one byte: OK, STORED, PRESENT without a value... */
    static ByteBuffer reply(byte code) {
        return ByteBuffer.wrap(new byte[] {code});
    }

    /** A GET's or TRY_GET's reply: PRESENT and the value. */
    static ByteBuffer present(String value) {
        return encode(out -> {
            out.writeByte(PRESENT);
            writeString(out, value);
        });
    }

    /** A GET_EACH's reply when every key is there: PRESENT and the values in order. */
    static ByteBuffer each(List<String> values) {
        return encode(out -> {
            out.writeByte(PRESENT);
            for (String v : values) {
                writeString(out, v);
            }
        });
    }

    /** A GET_EACH's reply when its wait ran out: ABSENT and the index of the first key still missing. */
    static ByteBuffer missing(int firstMissing) {
        return encode(out -> {
            out.writeByte(ABSENT);
            out.writeInt(firstMissing);
        });
    }

    private interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    private static ByteBuffer encode(Writer w) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            w.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ByteBuffer.wrap(bytes.toByteArray());
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
