package io.kolo.launcher.tools;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * An ed25519 key pair in OpenSSH's own formats (the {@code openssh-key-v1} private key, unencrypted, and
 * the one-line public key), made with the JDK alone so {@code kolo keys generate} needs no ssh-keygen.
 */
record SshKeys(String privateKeyPem, String publicKeyLine) {
    private static final String TYPE = "ssh-ed25519";
    // An Ed25519 public key and private seed are 32 bytes each; the X.509 encoding ends with the public key.
    private static final int RAW = 32;

    static SshKeys generate(String comment) {
        KeyPair pair;
        try {
            pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot make Ed25519 keys: " + e.getMessage(), e);
        }
        byte[] x509 = pair.getPublic().getEncoded();
        byte[] pub = Arrays.copyOfRange(x509, x509.length - RAW, x509.length);
        byte[] seed = ((java.security.interfaces.EdECPrivateKey) pair.getPrivate()).getBytes()
                .orElseThrow(() -> new IllegalStateException("this JDK does not expose Ed25519 private key bytes"));

        byte[] publicBlob = bytes(out -> {
            string(out, TYPE.getBytes(StandardCharsets.US_ASCII));
            string(out, pub);
        });
        int check = new SecureRandom().nextInt();
        byte[] privateSection = bytes(out -> {
            out.writeInt(check);
            out.writeInt(check);
            string(out, TYPE.getBytes(StandardCharsets.US_ASCII));
            string(out, pub);
            byte[] secret = new byte[2 * RAW];
            System.arraycopy(seed, 0, secret, 0, RAW);
            System.arraycopy(pub, 0, secret, RAW, RAW);
            string(out, secret);
            string(out, comment.getBytes(StandardCharsets.UTF_8));
            // Padding to the cipher block size ("none": 8) with bytes 1, 2, 3, ...
            int len = out.size();
            for (int i = 1; (len + i - 1) % 8 != 0; i++) {
                out.writeByte(i);
            }
        });
        byte[] whole = bytes(out -> {
            out.write("openssh-key-v1\0".getBytes(StandardCharsets.US_ASCII));
            string(out, "none".getBytes(StandardCharsets.US_ASCII));
            string(out, "none".getBytes(StandardCharsets.US_ASCII));
            string(out, new byte[0]);
            out.writeInt(1);
            string(out, publicBlob);
            string(out, privateSection);
        });
        StringBuilder pem = new StringBuilder("-----BEGIN OPENSSH PRIVATE KEY-----\n");
        String b64 = Base64.getEncoder().encodeToString(whole);
        for (int i = 0; i < b64.length(); i += 70) {
            pem.append(b64, i, Math.min(b64.length(), i + 70)).append('\n');
        }
        pem.append("-----END OPENSSH PRIVATE KEY-----\n");
        String line = TYPE + " " + Base64.getEncoder().encodeToString(publicBlob)
                + (comment.isEmpty() ? "" : " " + comment) + "\n";
        return new SshKeys(pem.toString(), line);
    }

    private interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    private static byte[] bytes(Writer w) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(buf)) {
            w.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return buf.toByteArray();
    }

    private static void string(DataOutputStream out, byte[] value) throws IOException {
        out.writeInt(value.length);
        out.write(value);
    }
}
