// Java's HTTP stack as a peer of h2sim (h2sim-cli/tests/interop_java.rs),
// run from source by `java Peer.java MODE ...` (JDK 11 or later):
//
//   client CA_FILE BASE_URL N  java.net.http.HttpClient over TLS: one GET
//                              /1k that opens the connection, then N
//                              requests at once on it, a third each GET /1k,
//                              POST /up with 100 KiB behind `expect:
//                              100-continue`, GET /big (300 KiB);
//                              every answer checked, prints "ok N"
//   upgrade BASE_URL COLD N    the same client over cleartext, COLD times
//                              anew: its first request, GET /big, upgrades
//                              its connection (h2c, RFC 7540 §3.2) and is
//                              answered with 300 KiB at once; then N GETs of
//                              /1k at once on the last one
//   server                     com.sun.net.httpserver (HTTP/1.1) on a free
//                              loopback port, printing "listening PORT":
//                              /1k answers 1,024 bytes, /echo its request
//                              body, /stats "served N"
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public class Peer {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "client" -> client(args[1], args[2], Integer.parseInt(args[3]));
            case "upgrade" -> upgrade(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
            case "server" -> server();
            default -> throw new IllegalArgumentException("mode " + args[0]);
        }
    }

    /** A context that trusts the test CA alone, so h2sim's certificate is checked. */
    static SSLContext trusting(String caFile) throws Exception {
        var ca = CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(Path.of(caFile))));
        var store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        store.setCertificateEntry("ca", ca);
        var trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        var context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }

    static HttpClient.Builder http2() {
        return HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_2)
            .connectTimeout(Duration.ofSeconds(10));
    }

    static void client(String caFile, String base, int n) throws Exception {
        var client = http2().sslContext(trusting(caFile)).build();
        first(client, base);
        var upload = new byte[100 * 1024];
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            HttpRequest request;
            long want;
            int status;
            switch (i % 3) {
                case 0 -> { request = get(base + "/1k"); want = 1024; status = 200; }
                case 1 -> {
                    // Sent once the server says 100 (Continue).
                    request = HttpRequest.newBuilder(URI.create(base + "/up"))
                        .timeout(Duration.ofSeconds(30))
                        .expectContinue(true)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(upload)).build();
                    want = 1024;
                    status = 201;
                }
                default -> { request = get(base + "/big"); want = 300 * 1024; status = 200; }
            }
            answers.add(client.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
                .thenApply(r -> check(r, status, want)));
        }
        report(answers);
    }

    static void upgrade(String base, int cold, int n) throws Exception {
        HttpClient client = null;
        for (int i = 0; i < cold; i++) {
            client = http2().build();
            var answer = client.send(get(base + "/big"), HttpResponse.BodyHandlers.ofByteArray());
            var problem = check(answer, 200, 300 * 1024);
            if (problem != null) {
                System.out.println("upgrade " + i + ": " + problem);
                System.exit(1);
            }
        }
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            answers.add(client.sendAsync(get(base + "/1k"), HttpResponse.BodyHandlers.ofByteArray())
                .thenApply(r -> check(r, 200, 1024)));
        }
        report(answers);
    }

    /**
     * One request alone: requests sent before the client holds an HTTP/2
     * connection each open one of their own.
     */
    static void first(HttpClient client, String base) throws Exception {
        var answer = client.send(get(base + "/1k"), HttpResponse.BodyHandlers.ofByteArray());
        var problem = check(answer, 200, 1024);
        if (problem != null) {
            System.out.println("first request: " + problem);
            System.exit(1);
        }
    }

    static HttpRequest get(String url) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build();
    }

    /** What is wrong with an answer, or null. */
    static String check(HttpResponse<byte[]> r, int status, long length) {
        if (r.version() != HttpClient.Version.HTTP_2) {
            return r.uri() + ": " + r.version();
        }
        if (r.statusCode() != status || r.body().length != length) {
            return r.uri() + ": " + r.statusCode() + " with " + r.body().length + " bytes";
        }
        return null;
    }

    static void report(List<CompletableFuture<String>> answers) {
        int ok = 0;
        for (var answer : answers) {
            String problem;
            try {
                problem = answer.join();
            } catch (Exception e) {
                problem = e.toString();
            }
            if (problem == null) {
                ok++;
            } else {
                System.out.println(problem);
            }
        }
        System.out.println("ok " + ok);
        System.exit(ok == answers.size() ? 0 : 1);
    }

    static void server() throws Exception {
        var server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        var served = new AtomicLong();
        var kib = new byte[1024];
        server.createContext("/1k", x -> {
            x.getRequestBody().readAllBytes();
            served.incrementAndGet();
            x.sendResponseHeaders(200, kib.length);
            try (var out = x.getResponseBody()) { out.write(kib); }
        });
        server.createContext("/echo", x -> {
            byte[] body;
            try (InputStream in = x.getRequestBody()) { body = in.readAllBytes(); }
            served.incrementAndGet();
            x.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
            try (var out = x.getResponseBody()) { out.write(body); }
        });
        server.createContext("/stats", x -> {
            var text = ("served " + served.get()).getBytes();
            x.sendResponseHeaders(200, text.length);
            try (var out = x.getResponseBody()) { out.write(text); }
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
        System.out.println("listening " + server.getAddress().getPort());
        System.out.flush();
    }
}
