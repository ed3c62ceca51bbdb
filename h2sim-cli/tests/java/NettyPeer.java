// Netty's HTTP/2 (Debian's libnetty-java, 4.1) as a peer of h2sim
// (h2sim-cli/tests/interop_netty.rs): the codec that gRPC-java, Vert.x,
// Reactor Netty and so many Java network functions run on, cleartext with
// prior knowledge. Built with javac against Debian's jars:
//
//   server                  on a free loopback port, printing "listening
//                           PORT": /1k answers 1,024 bytes, /big 300 KiB,
//                           /echo its request body, /stats "served N"
//   client HOST:PORT N      one connection, N requests at once on it, a third
//                           each GET /1k, POST /up with 100 KiB (answered
//                           201), GET /big (300 KiB); every answer's status
//                           and length checked, prints "ok N"
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrame;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

public class NettyPeer {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "server" -> server();
            case "client" -> client(args[1], Integer.parseInt(args[2]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    /** Requests answered, /stats aside. */
    static final AtomicLong SERVED = new AtomicLong();

    static void server() throws Exception {
        var group = new NioEventLoopGroup(2);
        var bootstrap = new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(
                        Http2FrameCodecBuilder.forServer().build(),
                        new Http2MultiplexHandler(new ChannelInitializer<Channel>() {
                            @Override
                            protected void initChannel(Channel stream) {
                                stream.pipeline().addLast(new Answer());
                            }
                        }));
                }
            });
        var channel = bootstrap.bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        System.out.println("listening " + ((InetSocketAddress) channel.localAddress()).getPort());
        System.out.flush();
        channel.closeFuture().sync();
    }

    /** One stream of the server: /1k, /big (300 KiB), /echo, /stats. */
    static class Answer extends SimpleChannelInboundHandler<Http2StreamFrame> {
        String path;
        long received;
        ByteBuf echo = Unpooled.buffer();

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Http2StreamFrame frame) {
            boolean end = false;
            if (frame instanceof Http2HeadersFrame headers) {
                if (path == null) {
                    path = headers.headers().path().toString();
                }
                end = headers.isEndStream();
            } else if (frame instanceof Http2DataFrame data) {
                received += data.content().readableBytes();
                if ("/echo".equals(path)) {
                    echo.writeBytes(data.content());
                }
                end = data.isEndStream();
            }
            if (!end) {
                return;
            }
            ByteBuf body;
            switch (path) {
                case "/1k" -> body = Unpooled.wrappedBuffer(new byte[1024]);
                case "/big" -> body = Unpooled.wrappedBuffer(new byte[300 * 1024]);
                case "/echo" -> body = echo;
                case "/stats" -> body = Unpooled.copiedBuffer(("served " + SERVED.get()).getBytes());
                default -> body = Unpooled.EMPTY_BUFFER;
            }
            if (!"/stats".equals(path)) {
                SERVED.incrementAndGet();
            }
            var head = new DefaultHttp2Headers().status("200").setInt("content-length", body.readableBytes());
            ctx.write(new DefaultHttp2HeadersFrame(head, false));
            ctx.writeAndFlush(new DefaultHttp2DataFrame(body, true));
        }
    }

    static void client(String authority, int n) throws Exception {
        var group = new NioEventLoopGroup(1);
        String[] hostPort = authority.split(":");
        var bootstrap = new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(
                        Http2FrameCodecBuilder.forClient().build(),
                        new Http2MultiplexHandler(new SimpleChannelInboundHandler<Object>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, Object msg) {}
                        }));
                }
            });
        var parent = bootstrap.connect(hostPort[0], Integer.parseInt(hostPort[1])).sync().channel();
        var done = new CountDownLatch(n);
        var ok = new AtomicInteger();
        var problems = new StringBuffer();
        var upload = new byte[100 * 1024];
        for (int i = 0; i < n; i++) {
            int which = i % 3;
            String path = which == 0 ? "/1k" : which == 1 ? "/up" : "/big";
            long want = which == 2 ? 300 * 1024 : 1024;
            String status = which == 1 ? "201" : "200";
            var stream = new Http2StreamChannelBootstrap(parent)
                .handler(new SimpleChannelInboundHandler<Http2StreamFrame>() {
                    String got;
                    long length;

                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, Http2StreamFrame frame) {
                        boolean end = false;
                        if (frame instanceof Http2HeadersFrame headers) {
                            if (got == null) {
                                got = String.valueOf(headers.headers().status());
                            }
                            end = headers.isEndStream();
                        } else if (frame instanceof Http2DataFrame data) {
                            length += data.content().readableBytes();
                            end = data.isEndStream();
                        }
                        if (end) {
                            if (status.equals(got) && length == want) {
                                ok.incrementAndGet();
                            } else {
                                problems.append(path + ": " + got + " with " + length + " bytes\n");
                            }
                            done.countDown();
                        }
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        problems.append(path + ": " + cause + "\n");
                        done.countDown();
                    }
                })
                .open().sync().getNow();
            var head = new DefaultHttp2Headers()
                .method(which == 1 ? "POST" : "GET")
                .scheme("http")
                .authority(authority)
                .path(path);
            if (which == 1) {
                stream.write(new DefaultHttp2HeadersFrame(head, false));
                stream.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(upload), true));
            } else {
                stream.writeAndFlush(new DefaultHttp2HeadersFrame(head, true));
            }
        }
        boolean finished = done.await(60, TimeUnit.SECONDS);
        System.out.print(problems);
        System.out.println((finished ? "" : "timed out: ") + "ok " + ok.get());
        parent.close().sync();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        System.exit(finished && ok.get() == n ? 0 : 1);
    }
}
