package io.kolo.transport;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transport variables: defaults, accepted values, and a message naming the variable for a bad one. */
class TransportsSettingsTest {

    @Test
    void singleCopyIsAutoByDefaultAndTakesAutoZeroOrOne() {
        assertEquals(ShmTransport.SingleCopy.AUTO, Transports.singleCopy(Map.of()));
        assertEquals(ShmTransport.SingleCopy.AUTO, Transports.singleCopy(Map.of("KOLO_SHM_SINGLE_COPY", "Auto")));
        assertEquals(ShmTransport.SingleCopy.ALWAYS, Transports.singleCopy(Map.of("KOLO_SHM_SINGLE_COPY", " 1 ")));
        assertEquals(ShmTransport.SingleCopy.NEVER, Transports.singleCopy(Map.of("KOLO_SHM_SINGLE_COPY", "0")));
        assertEquals(ShmTransport.SingleCopy.NEVER, Transports.singleCopy(Map.of("KOLO_SHM_SINGLE_COPY", "off")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Transports.singleCopy(Map.of("KOLO_SHM_SINGLE_COPY", "sometimes")));
        assertTrue(e.getMessage().startsWith("KOLO_SHM_SINGLE_COPY='sometimes' is invalid: expected auto, 1 or 0"), e.getMessage());
    }

    @Test
    void ringBytesMustBeAPowerOfTwoInRange() {
        assertEquals(ShmTransport.DEFAULT_RING_BYTES, Transports.ringBytes(Map.of()));
        assertEquals(65536, Transports.ringBytes(Map.of("KOLO_SHM_RING_BYTES", "65536")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Transports.ringBytes(Map.of("KOLO_SHM_RING_BYTES", "65535")));
        assertTrue(e.getMessage().startsWith("KOLO_SHM_RING_BYTES='65535' is invalid: expected a power of two"), e.getMessage());
    }
}
