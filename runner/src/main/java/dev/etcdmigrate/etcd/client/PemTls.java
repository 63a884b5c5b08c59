package dev.etcdmigrate.etcd.client;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A TLS context from etcd's own PEM files (--cert-file, --key-file, --trusted-ca-file), to speak to the
 * cluster's client URLs as the member itself does. Keys in PKCS#8, PKCS#1 (RSA, what kubeadm writes) and
 * SEC1 (EC) form; the latter two are wrapped into PKCS#8, which Java reads.
 */
public final class PemTls {

    private static final Pattern BLOCK =
            Pattern.compile("-----BEGIN ([A-Z ]+)-----([^-]+)-----END \\1-----", Pattern.DOTALL);
    private static final byte[] RSA_ALGORITHM = {
        0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00
    };
    private static final byte[] EC_PUBLIC_KEY_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01
    };

    private PemTls() {}

    /** The HTTP/1.1 client (2 s to connect) the cluster's callers speak with these TLS files; see {@link #context}. */
    public static HttpClient httpClient(Optional<Path> cert, Optional<Path> key, Optional<Path> ca)
            throws IOException, GeneralSecurityException {
        return httpClient(cert, key, ca, Duration.ofSeconds(2));
    }

    /**
     * {@link #httpClient(Optional, Optional, Optional)} with its own time to connect, which the JDK counts to the end
     * of the TLS handshake.
     */
    public static HttpClient httpClient(Optional<Path> cert, Optional<Path> key, Optional<Path> ca, Duration connect)
            throws IOException, GeneralSecurityException {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connect)
                .sslContext(context(cert, key, ca))
                .build();
    }

    /** @param cert and key: the client certificate (empty: none); ca: whom to trust (empty: the JDK's CAs) */
    public static SSLContext context(Optional<Path> cert, Optional<Path> key, Optional<Path> ca)
            throws IOException, GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        KeyManagerFactory keys = null;
        if (cert.isPresent() && key.isPresent()) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            Certificate[] chain = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(cert.get())))
                    .toArray(Certificate[]::new);
            store.setKeyEntry("client", privateKey(Files.readString(key.get())), new char[0], chain);
            keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, new char[0]);
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        if (ca.isPresent()) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(ca.get())))) {
                store.setCertificateEntry("ca" + i++, c);
            }
            trust.init(store);
        } else {
            trust.init((KeyStore) null);
        }
        context.init(keys == null ? null : keys.getKeyManagers(), trust.getTrustManagers(), null);
        return context;
    }

    static PrivateKey privateKey(String pem) throws IOException, GeneralSecurityException {
        Matcher m = BLOCK.matcher(pem);
        while (m.find()) {
            String type = m.group(1);
            if (!type.endsWith("PRIVATE KEY")) continue; // e.g. EC PARAMETERS before the key
            byte[] der = Base64.getMimeDecoder().decode(m.group(2).trim());
            return switch (type) {
                case "PRIVATE KEY" -> generate(der, "RSA", "EC", "Ed25519");
                case "RSA PRIVATE KEY" -> generate(pkcs8(RSA_ALGORITHM, der), "RSA");
                case "EC PRIVATE KEY" -> generate(pkcs8(ecAlgorithm(der), der), "EC");
                default -> throw new GeneralSecurityException("a " + type + " is not supported");
            };
        }
        throw new GeneralSecurityException("no private key in the key file");
    }

    private static PrivateKey generate(byte[] pkcs8, String... algorithms) throws GeneralSecurityException {
        GeneralSecurityException last = null;
        for (String algorithm : algorithms) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw last;
    }

    /** SEC1's [0] parameters hold the curve's OID: the PKCS#8 algorithm is id-ecPublicKey with that curve. */
    private static byte[] ecAlgorithm(byte[] sec1) throws GeneralSecurityException {
        int[] outer = header(sec1, 0);
        int at = outer[0];
        while (at < sec1.length) {
            int[] h = header(sec1, at);
            if ((sec1[at] & 0xff) == 0xa0) {
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                body.writeBytes(EC_PUBLIC_KEY_OID);
                body.write(sec1, h[0], h[1]);
                return tlv(0x30, body.toByteArray());
            }
            at = h[0] + h[1];
        }
        throw new GeneralSecurityException("the EC key names no curve");
    }

    /** {start of content, content length} of the DER element at {@code at}. */
    private static int[] header(byte[] der, int at) throws GeneralSecurityException {
        if (at + 2 > der.length) throw new GeneralSecurityException("truncated DER");
        int len = der[at + 1] & 0xff;
        int start = at + 2;
        if (len > 0x80) {
            int n = len & 0x7f;
            len = 0;
            for (int i = 0; i < n; i++) len = (len << 8) | (der[start + i] & 0xff);
            start += n;
        }
        return new int[] {start, len};
    }

    private static byte[] pkcs8(byte[] algorithm, byte[] key) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x02, 0x01, 0x00});
        body.writeBytes(algorithm);
        body.writeBytes(tlv(0x04, key));
        return tlv(0x30, body.toByteArray());
    }

    private static byte[] tlv(int tag, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int n = content.length;
        if (n < 0x80) {
            out.write(n);
        } else if (n < 0x100) {
            out.write(0x81);
            out.write(n);
        } else if (n < 0x10000) {
            out.write(0x82);
            out.write(n >> 8);
            out.write(n);
        } else {
            out.write(0x83);
            out.write(n >> 16);
            out.write(n >> 8);
            out.write(n);
        }
        out.writeBytes(content);
        return out.toByteArray();
    }
}
