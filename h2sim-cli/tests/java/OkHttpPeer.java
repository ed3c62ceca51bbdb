// OkHttp (Debian's libokhttp-java, 3.13) as a client of h2sim's server
// (h2sim-cli/tests/interop_okhttp.rs): the JVM's most used HTTP client
// (Android, Retrofit, many Java network functions' test tools), whose
// HTTP/2 is its own. Run from source with Debian's jars on the classpath:
//
//   OkHttpPeer CA BASE N MODE   N requests, 50 at a time, a third each GET
//                               BASE/1k, POST BASE/up with 100 KiB
//                               (answered 201) and GET BASE/big (300 KiB);
//                               MODE is h2 (TLS, ALPN, the certificate
//                               checked against CA), h2c (prior knowledge)
//                               or http1; each answer's status and length
//                               checked; prints "ok N over PROTOCOLS" or
//                               the first failures
import java.io.FileInputStream;
import java.io.IOException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

public class OkHttpPeer {
    record Want(String method, String path, int status, int length) {}

    static final Want[] WANTS = {
        new Want("GET", "/1k", 200, 1024),
        new Want("POST", "/up", 201, 1024),
        new Want("GET", "/big", 200, 300 * 1024),
    };

    public static void main(String[] args) throws Exception {
        String ca = args[0], base = args[1], mode = args[3];
        int n = Integer.parseInt(args[2]);
        OkHttpClient client = client(ca, mode);
        byte[] upload = new byte[100 * 1024];
        Arrays.fill(upload, (byte) 'u');
        CountDownLatch done = new CountDownLatch(n);
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        Set<String> protocols = Collections.synchronizedSet(new TreeSet<>());
        for (int i = 0; i < n; i++) {
            Want want = WANTS[i % WANTS.length];
            Request.Builder request = new Request.Builder().url(base + want.path());
            if (want.method().equals("POST")) {
                request.post(RequestBody.create(MediaType.get("application/octet-stream"), upload));
            }
            client.newCall(request.build()).enqueue(new Callback() {
                public void onFailure(Call call, IOException e) {
                    problems.add(want + ": " + e);
                    done.countDown();
                }

                public void onResponse(Call call, Response response) {
                    try (ResponseBody body = response.body()) {
                        int length = body.bytes().length;
                        protocols.add(response.protocol().toString());
                        if (response.code() != want.status() || length != want.length()) {
                            problems.add(want + ": " + response.code() + ", " + length + " bytes");
                        }
                    } catch (IOException e) {
                        problems.add(want + ": " + e);
                    }
                    done.countDown();
                }
            });
        }
        if (!done.await(60, TimeUnit.SECONDS)) {
            problems.add(done.getCount() + " requests still open after 60 s");
        }
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
        if (!problems.isEmpty()) {
            System.out.println(problems.size() + " failed, the first: "
                + problems.subList(0, Math.min(5, problems.size())));
            System.exit(1);
        }
        System.out.println("ok " + n + " over " + String.join(",", protocols));
    }

    /// 50 requests at a time to the one host, trusting the test CA alone.
    static OkHttpClient client(String ca, String mode) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (FileInputStream in = new FileInputStream(ca)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(trust);
        X509TrustManager manager = (X509TrustManager) factory.getTrustManagers()[0];
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, new X509TrustManager[] {manager}, null);
        Dispatcher dispatcher = new Dispatcher();
        dispatcher.setMaxRequests(50);
        dispatcher.setMaxRequestsPerHost(50);
        List<Protocol> protocols = switch (mode) {
            case "h2" -> List.of(Protocol.HTTP_2, Protocol.HTTP_1_1);
            case "h2c" -> List.of(Protocol.H2_PRIOR_KNOWLEDGE);
            case "http1" -> List.of(Protocol.HTTP_1_1);
            default -> throw new IllegalArgumentException("mode " + mode);
        };
        return new OkHttpClient.Builder()
            .dispatcher(dispatcher)
            .protocols(protocols)
            .sslSocketFactory(tls.getSocketFactory(), manager)
            .readTimeout(30, TimeUnit.SECONDS)
            .build();
    }
}
