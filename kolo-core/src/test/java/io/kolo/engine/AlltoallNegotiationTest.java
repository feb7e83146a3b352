package io.kolo.engine;

import io.kolo.DataType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an alltoall costs the coordinator: each rank's request and the one response rank 0 broadcasts carry the op, not
 * the ranks' splits, so neither grows with the job (they were {@code 8n} and {@code 8n²} bytes), and the cached
 * response answers the next call whatever its splits.
 */
class AlltoallNegotiationTest {

    /** Rank {@code rank}'s alltoall of a job of {@code n}: rows of 4 floats, a split per rank that differs by rank. */
    private static Op alltoall(int rank, int n) {
        long[] splits = new long[n];
        long rows = 0;
        for (int p = 0; p < n; p++) {
            splits[p] = (rank + p) % 3;
            rows += splits[p];
        }
        return Op.of(OpKind.ALLTOALL, "moe.dispatch", DataType.FLOAT32, new long[]{rows, 4},
                MemorySegment.ofArray(new float[(int) rows * 4])).splits(splits);
    }

    private record Negotiation(int requestBytes, int responseBytes, Response response) {
        /** What rank 0 handles per new alltoall: every rank's request gathered, and the response it broadcasts. */
        long coordinatorBytes(int n) {
            return (long) n * requestBytes + responseBytes;
        }
    }

    private static Negotiation negotiate(int n) {
        MessageTable table = new MessageTable(n);
        List<Response> errors = new ArrayList<>();
        int requestBytes = -1;
        for (int r = 0; r < n; r++) {
            Request request = alltoall(r, n).request(r);
            int bytes = ControlMessages.encodeRequests(List.of(request)).length;
            if (requestBytes >= 0) {
                assertEquals(requestBytes, bytes, "every rank's request is the same size");
            }
            requestBytes = bytes;
            table.add(List.of(request), errors);
        }
        assertTrue(errors.isEmpty(), errors.toString());
        List<Response> ready = table.takeReady();
        assertEquals(1, ready.size(), ready.toString());
        Response response = ready.getFirst();
        assertNull(response.error(), response.error());
        int responseBytes = ControlMessages.encode(List.of(response), null, null, null).length;
        return new Negotiation(requestBytes, responseBytes, response);
    }

    @Test
    void neitherTheRequestNorTheResponseGrowsWithTheJob() {
        Negotiation small = negotiate(2);
        for (int n : new int[]{16, 1024}) {
            Negotiation big = negotiate(n);
            System.out.println("alltoall negotiation at " + n + " ranks: request " + big.requestBytes()
                    + " bytes, response " + big.responseBytes() + " bytes; rank 0 gathers and answers "
                    + big.coordinatorBytes(n) + " bytes");
            assertEquals(small.requestBytes(), big.requestBytes(), "request bytes at 2 and " + n + " ranks");
            assertEquals(small.responseBytes(), big.responseBytes(), "response bytes at 2 and " + n + " ranks");
        }
    }

    @Test
    void theCachedResponseAnswersTheNextCallWhateverItsSplitsButNotAnotherRowShape() {
        int n = 8;
        Response cached = negotiate(n).response();
        for (int r = 0; r < n; r++) {
            // Another rank's splits (and rows): what a routing step that changed looks like.
            Op next = alltoall((r + 1) % n, n);
            assertTrue(cached.answers(next, r), "rank " + r);
        }
        Op wider = Op.of(OpKind.ALLTOALL, "moe.dispatch", DataType.FLOAT32, new long[]{3, 5},
                MemorySegment.ofArray(new float[15])).splits(new long[]{3, 0, 0, 0, 0, 0, 0, 0});
        assertFalse(cached.answers(wider, 0), "a row of 5 floats is another op");
        Op ints = Op.of(OpKind.ALLTOALL, "moe.dispatch", DataType.INT32, new long[]{3, 4},
                MemorySegment.ofArray(new int[12])).splits(new long[]{3, 0, 0, 0, 0, 0, 0, 0});
        assertFalse(cached.answers(ints, 0), "another type is another op");
    }
}
