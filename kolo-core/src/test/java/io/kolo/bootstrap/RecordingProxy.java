package io.kolo.bootstrap;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * An eavesdropper on the path of one connection (loopback): relays a client to {@code target} and records every byte
 * the client sent, as an attacker who captured the traffic would have it.
 */
public final class RecordingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final ByteArrayOutputStream fromClient = new ByteArrayOutputStream();
    private final Thread thread;

    public RecordingProxy(InetSocketAddress target) throws IOException {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        thread = Thread.ofPlatform().daemon().start(() -> relay(target));
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
    }

    /** Everything the client sent so far. */
    public synchronized byte[] recorded() {
        return fromClient.toByteArray();
    }

    private void relay(InetSocketAddress target) {
        try (Socket client = listener.accept(); Socket server = new Socket(target.getAddress(), target.getPort())) {
            InputStream fromServer = server.getInputStream();
            Thread back = Thread.ofPlatform().daemon().start(() -> pump(fromServer, client, null));
            pump(client.getInputStream(), server, fromClient);
            back.join(5000);
        } catch (IOException | InterruptedException ignored) {
            // The test closed the proxy, or a side hung up: the recording is what it is.
        }
    }

    private void pump(InputStream in, Socket to, ByteArrayOutputStream record) {
        copy(in, to, record == null ? null : (buf, n) -> {
            synchronized (this) {
                record.write(buf, 0, n);
            }
        });
    }

    /** What the bytes read are also given to, before they go on. */
    @FunctionalInterface
    interface Tap {
        void bytes(byte[] buf, int n);
    }

    /**
     * Copies {@code in} to {@code to} until either side goes away, showing each piece to {@code tap} (null: none), then
     * ends {@code to}'s output; the stand-in stores of other tests forward with it too.
     */
    static void copy(InputStream in, Socket to, Tap tap) {
        try {
            OutputStream out = to.getOutputStream();
            byte[] buf = new byte[4096];
            for (int n; (n = in.read(buf)) > 0; ) {
                if (tap != null) {
                    tap.bytes(buf, n);
                }
                out.write(buf, 0, n);
                out.flush();
            }
            to.shutdownOutput();
        } catch (IOException ignored) {
            // One side went away.
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        thread.interrupt();
    }
}
