package io.kolo.engine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The coordinator round's messages: each rank's requests to rank 0, and what rank 0 broadcasts back, the responses
 * every rank executes, in order, and now and then which ranks the ops that have waited a while still wait for (so a
 * rank whose wait times out can name them).
 */
final class ControlMessages {
    private ControlMessages() {
    }

    static byte[] encodeRequests(List<Request> requests) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(requests.size());
            for (Request r : requests) {
                r.write(out);
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Request> decodeRequests(byte[] data) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
            int n = in.readInt();
            List<Request> list = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                list.add(Request.read(in));
            }
            return list;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param waitingFor null when unchanged since the last answer
     * @param tuning     the autotuner's next choice, or null
     * @param ending     why the set ends on every rank after these responses (the stall shutdown), or null
     */
    static byte[] encode(List<Response> responses, Map<String, String> waitingFor, Autotuner.Tuning tuning,
                         String ending) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(responses.size());
            for (Response r : responses) {
                r.write(out);
            }
            out.writeBoolean(waitingFor != null);
            if (waitingFor != null) {
                out.writeInt(waitingFor.size());
                for (Map.Entry<String, String> e : waitingFor.entrySet()) {
                    out.writeUTF(e.getKey());
                    out.writeUTF(e.getValue());
                }
            }
            out.writeBoolean(tuning != null);
            if (tuning != null) {
                out.writeLong(tuning.fusionThresholdBytes());
                out.writeLong(tuning.cycleNanos());
                out.writeBoolean(tuning.cache());
                out.writeBoolean(tuning.hierarchicalAllreduce());
                out.writeBoolean(tuning.hierarchicalAllgather());
            }
            out.writeUTF(ending == null ? "" : ending);
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The responses; hands a new waiting-for map, when the answer carries one, to {@code waitingFor}, the
     * autotuner's choice to {@code tuning}, and why the set ends, when it does, to {@code ending}.
     */
    static List<Response> decode(byte[] data, Consumer<Map<String, String>> waitingFor,
                                 Consumer<Autotuner.Tuning> tuning, Consumer<String> ending) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
            int n = in.readInt();
            List<Response> responses = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                responses.add(Response.read(in));
            }
            if (in.readBoolean()) {
                int m = in.readInt();
                Map<String, String> w = new LinkedHashMap<>();
                for (int i = 0; i < m; i++) {
                    w.put(in.readUTF(), in.readUTF());
                }
                waitingFor.accept(w);
            }
            if (in.readBoolean()) {
                tuning.accept(new Autotuner.Tuning(in.readLong(), in.readLong(), in.readBoolean(), in.readBoolean(),
                        in.readBoolean()));
            }
            String end = in.readUTF();
            if (!end.isEmpty()) {
                ending.accept(end);
            }
            return responses;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
