// Jetty's HTTP/2 server (Debian's libjetty9-java, 9.4) as a peer of
// h2sim's client (h2sim-cli/tests/interop_jetty.rs): the servlet
// container many Java services run in, with an HTTP/2 (and HPACK) of its
// own. Run from source with Debian's jars on the classpath:
//
//   JettyPeer    on a free loopback port, HTTP/1.1 and HTTP/2 with prior
//                knowledge, printing "listening PORT": GET /1k answers
//                1,024 bytes, POST /up reads the body and answers 201 with
//                1,024 bytes (400 unless the body was 100 KiB), GET /big
//                300 KiB, /stats "served N" (the requests before it)
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.AbstractHandler;

public class JettyPeer {
    public static void main(String[] args) throws Exception {
        AtomicLong served = new AtomicLong();
        byte[] small = filled(1024, 'a');
        byte[] big = filled(300 * 1024, 'b');
        Server server = new Server();
        HttpConfiguration config = new HttpConfiguration();
        ServerConnector connector = new ServerConnector(
            server, new HttpConnectionFactory(config), new HTTP2CServerConnectionFactory(config));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new AbstractHandler() {
            public void handle(String target, Request base, HttpServletRequest request,
                    HttpServletResponse response) throws IOException {
                base.setHandled(true);
                int got = request.getInputStream().readAllBytes().length;
                byte[] body = switch (target) {
                    case "/1k" -> small;
                    case "/up" -> small;
                    case "/big" -> big;
                    case "/stats" -> ("served " + served.get()).getBytes();
                    default -> new byte[0];
                };
                int status = switch (target) {
                    case "/1k", "/big", "/stats" -> 200;
                    case "/up" -> got == 100 * 1024 ? 201 : 400;
                    default -> 404;
                };
                if (!target.equals("/stats")) {
                    served.incrementAndGet();
                }
                response.setStatus(status);
                response.setContentLength(body.length);
                response.getOutputStream().write(body);
            }
        });
        server.start();
        System.out.println("listening " + connector.getLocalPort());
        server.join();
    }

    static byte[] filled(int n, char c) {
        byte[] bytes = new byte[n];
        Arrays.fill(bytes, (byte) c);
        return bytes;
    }
}
