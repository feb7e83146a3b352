package io.kolo.launcher;

import io.kolo.launcher.job.Hosts;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KeysAndHostfileCommandTest {

    @Test
    void keysGenerateWritesAKeyPairSshKeygenAcceptsWithStrictModes(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("ssh");
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("keys", "generate", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolve("id_ed25519"))));
        assertEquals("rw-r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolve("authorized_keys"))));
        String pub = Files.readString(out.resolve("id_ed25519.pub"));
        assertEquals(pub, Files.readString(out.resolve("authorized_keys")));
        assertTrue(pub.matches("ssh-ed25519 [A-Za-z0-9+/=]+ kolo-job\n"), pub);

        // A second run must not silently replace a key that may already be deployed.
        LauncherProcessTest.Result again = LauncherProcessTest.kolo("keys", "generate", "--out", out.toString());
        assertEquals(2, again.code());
        assertTrue(again.err().contains("already exists (use --force"), again.err());
        // Where the directory cannot be made: one line saying why, not the exception's class.
        Path under = Files.writeString(tmp.resolve("a-file"), "x").resolve("ssh");
        LauncherProcessTest.Result refused = LauncherProcessTest.kolo("keys", "generate", "--out", under.toString());
        assertEquals(1, refused.code(), refused.err());
        assertEquals("kolo: cannot write keys to " + under + ": Not a directory", refused.err().strip());
        LauncherProcessTest.Result hf = LauncherProcessTest.kolo("hostfile", "--out", under.toString(), "x");
        assertEquals("kolo: cannot write " + under + ": Not a directory", hf.err().strip());

        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/ssh-keygen")),
                "skipped: ssh-keygen (openssh-client) is not installed to check the private key");
        Process p = new ProcessBuilder("ssh-keygen", "-y", "-f", out.resolve("id_ed25519").toString())
                .redirectErrorStream(true).start();
        String derived = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), derived);
        // ssh-keygen derives the public key from our private key file: the two files must agree.
        assertEquals(pub.substring(0, pub.lastIndexOf(' ')), derived.strip().split(" ")[0] + " "
                + derived.strip().split(" ")[1]);
    }

    @Test
    void hostfileRendersBothSyntaxes(@TempDir Path tmp) throws Exception {
        LauncherProcessTest.Result r = LauncherProcessTest.kolo("hostfile", "-H", "a:2,b:2,a:1");
        assertEquals(0, r.code(), r.err());
        assertEquals("a slots=3\nb slots=2\n", r.out());
        r = LauncherProcessTest.kolo("hostfile", "--format", "mpich", "--slots", "4", "w-0", "w-1:2");
        assertEquals("w-0:4\nw-1:2\n", r.out());
        Path f = tmp.resolve("hf");
        assertEquals(0, LauncherProcessTest.kolo("hostfile", "--out", f.toString(), "x", "y").code());
        assertEquals(List.of(new Hosts.Host("x", 1), new Hosts.Host("y", 1)),
                Hosts.parseHostfile(Files.readAllLines(f), "hf"));
        LauncherProcessTest.Result bad = LauncherProcessTest.kolo("hostfile");
        assertEquals(2, bad.code());
        assertTrue(bad.err().startsWith("kolo: give either -H"), bad.err());
        assertEquals(2, LauncherProcessTest.kolo("hostfile", "--format", "slurm", "x").code());
    }
}
