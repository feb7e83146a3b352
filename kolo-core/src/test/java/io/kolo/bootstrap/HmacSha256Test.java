package io.kolo.bootstrap;

import org.junit.jupiter.api.Test;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link HmacSha256} gives what {@code javax.crypto.Mac} gives, and RFC 4231's published values. */
class HmacSha256Test {
    private static final HexFormat HEX = HexFormat.of();

    /** RFC 4231, section 4: test cases 1, 2, 3, 4, 6 and 7 (5 truncates its output). */
    @Test
    void rfc4231TestVectors() {
        check("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", HEX.formatHex(ascii("Hi There")),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        check(HEX.formatHex(ascii("Jefe")), HEX.formatHex(ascii("what do ya want for nothing?")),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        check("aa".repeat(20), "dd".repeat(50),
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
        check("0102030405060708090a0b0c0d0e0f10111213141516171819", "cd".repeat(50),
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
        // Keys longer than the block: hashed first.
        check("aa".repeat(131), HEX.formatHex(ascii("Test Using Larger Than Block-Size Key - Hash Key First")),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
        check("aa".repeat(131), HEX.formatHex(ascii("This is a test using a larger than block-size key and a larger"
                        + " than block-size data. The key needs to be hashed before being used by the HMAC algorithm.")),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
    }

    @Test
    void matchesTheJdksMacForKeysAndMessagesOfEveryLengthAroundTheBlock() throws Exception {
        Random random = new Random(42);
        int[] lengths = {0, 1, 16, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000};
        for (int keyLength : lengths) {
            if (keyLength == 0) {
                continue; // the JDK refuses an empty key
            }
            for (int messageLength : lengths) {
                byte[] key = new byte[keyLength];
                byte[] message = new byte[messageLength];
                random.nextBytes(key);
                random.nextBytes(message);
                Mac jdk = Mac.getInstance("HmacSHA256");
                jdk.init(new SecretKeySpec(key, "HmacSHA256"));
                assertArrayEquals(jdk.doFinal(message), HmacSha256.mac(key, message),
                        "key of " + keyLength + " bytes, message of " + messageLength);
            }
        }
    }

    private static void check(String keyHex, String messageHex, String expectedHex) {
        assertEquals(expectedHex, HEX.formatHex(HmacSha256.mac(HEX.parseHex(keyHex), HEX.parseHex(messageHex))));
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
