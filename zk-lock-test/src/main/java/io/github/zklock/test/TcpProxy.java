package io.github.zklock.test;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * A TCP proxy on the loopback interface between ZooKeeper clients and one server, that can cut
 * the link the way a network partition does. Thread per direction per connection, blocking I/O.
 * <ul>
 * <li>{@link #freeze()}: bytes are no longer forwarded (they wait in the proxy, as unacknowledged
 * segments would wait in TCP), sockets stay open, closes are not passed on, new connections are
 * accepted but not served. Neither side hears anything from the other.</li>
 * <li>{@link #freezeReplies()}: the same in one direction: the clients' bytes still reach the
 * server, the server's answers (and its closes) wait in the proxy. The server carries out what a
 * client asks; the client hears nothing of it.</li>
 * <li>{@link #drop(Duration)}: every connection is closed at once and new ones are closed as soon
 * as they are accepted, for the given time.</li>
 * <li>{@link #heal()}: forwarding resumes (held bytes first) and new connections are served; after
 * {@link #drop(Duration)} instead, the held bytes are lost with their connections.</li>
 * </ul>
 *
 * <p>A client's connection is accepted before the proxy connects to the server: where the server
 * refuses, the client, which a direct connection would have told so at once, is accepted and then
 * closed. A client that retries a refused connection but gives up on a closed one (a ZooKeeper
 * follower connecting to a leader that is binding its port) is served by a proxy with patience
 * ({@link #start(int, Duration)}), which tries the server again for a while first.
 */
public final class TcpProxy implements Closeable {

	private final InetSocketAddress target;

	/** How long to try a refusing server again before closing the client's connection. */
	private final long connectPatienceNanos;

	private final ServerSocket serverSocket;

	private final Set<Link> links = ConcurrentHashMap.newKeySet();

	private final Object monitor = new Object();

	private final Thread acceptor;

	private volatile boolean frozen;

	/** Whether the server's bytes to the clients are held (see {@link #freezeReplies()}). */
	private volatile boolean repliesFrozen;

	private volatile long refuseUntilNanos;

	private volatile boolean closed;

	private TcpProxy(InetSocketAddress target, Duration connectPatience) throws IOException {
		this.target = target;
		this.connectPatienceNanos = connectPatience.toNanos();
		this.serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept-" + this.serverSocket.getLocalPort());
		this.acceptor.setDaemon(true);
		this.acceptor.start();
	}

	/**
	 * Start a proxy to a server on the loopback interface.
	 * @param targetPort the server's port on 127.0.0.1
	 * @return the running proxy
	 * @throws IOException if no port can be bound
	 */
	public static TcpProxy start(int targetPort) throws IOException {
		return start(targetPort, Duration.ZERO);
	}

	/**
	 * Start a proxy to a server on the loopback interface that, when the server refuses a
	 * connection, tries again every 50 ms for a while before it closes the client's connection.
	 * Meanwhile the client's connection stays open and silent, and the proxy accepts no other.
	 * @param targetPort the server's port on 127.0.0.1
	 * @param connectPatience how long to try a refusing server, zero for one attempt
	 * @return the running proxy
	 * @throws IOException if no port can be bound
	 */
	public static TcpProxy start(int targetPort, Duration connectPatience) throws IOException {
		return new TcpProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), connectPatience);
	}

	/** The connect string that reaches the server through this proxy. */
	public String connectString() {
		return "127.0.0.1:" + this.serverSocket.getLocalPort();
	}

	/** The port this proxy listens on, on 127.0.0.1. */
	public int port() {
		return this.serverSocket.getLocalPort();
	}

	/** Stop forwarding in both directions; keep every socket open. */
	public void freeze() {
		this.frozen = true;
	}

	/** Stop forwarding the server's bytes to the clients; forward theirs to the server; keep every socket open. */
	public void freezeReplies() {
		this.repliesFrozen = true;
	}

	/**
	 * Close every connection and close new ones on accept for a while.
	 * @param refuseFor how long to refuse new connections (unless {@link #heal()} comes first)
	 */
	public void drop(Duration refuseFor) {
		this.refuseUntilNanos = System.nanoTime() + refuseFor.toNanos();
		for (Link link : this.links) {
			link.close();
		}
	}

	/** Forward again and serve new connections. */
	public void heal() {
		synchronized (this.monitor) {
			this.frozen = false;
			this.repliesFrozen = false;
			this.refuseUntilNanos = System.nanoTime();
			this.monitor.notifyAll();
		}
	}

	@Override
	public void close() {
		this.closed = true;
		try {
			this.serverSocket.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
		for (Link link : this.links) {
			link.close();
		}
		heal();
	}

	private void acceptLoop() {
		while (!this.closed) {
			Socket downstream;
			try {
				downstream = this.serverSocket.accept();
			}
			catch (IOException ex) {
				return;
			}
			if (System.nanoTime() - this.refuseUntilNanos < 0) {
				closeQuietly(downstream);
				continue;
			}
			Socket upstream = connectUpstream();
			if (upstream == null) {
				closeQuietly(downstream);
				continue;
			}
			try {
				downstream.setTcpNoDelay(true);
			}
			catch (IOException ex) {
				closeQuietly(upstream);
				closeQuietly(downstream);
				continue;
			}
			Link link = new Link(downstream, upstream);
			this.links.add(link);
			if (System.nanoTime() - this.refuseUntilNanos < 0) {
				// A drop() ran while this connection was being set up and did not see it.
				link.close();
				continue;
			}
			link.start();
		}
	}

	/**
	 * Connect to the server, again and again while it refuses and patience lasts.
	 * @return the connected socket, or {@code null} if the server refused to the end, or the proxy
	 * was closed
	 */
	private @Nullable Socket connectUpstream() {
		long deadline = System.nanoTime() + this.connectPatienceNanos;
		while (true) {
			Socket upstream = new Socket();
			try {
				upstream.setTcpNoDelay(true);
				upstream.connect(this.target, 5000);
				return upstream;
			}
			catch (IOException ex) {
				closeQuietly(upstream);
			}
			if (this.closed || System.nanoTime() - deadline >= 0) {
				return null;
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return null;
			}
		}
	}

	/**
	 * Wait while frozen.
	 * @param toClient whether the bytes go from the server to the client
	 * @return whether to go on forwarding (false once the link or the proxy is closed)
	 */
	private boolean awaitFlowing(Link link, boolean toClient) {
		synchronized (this.monitor) {
			while ((this.frozen || (toClient && this.repliesFrozen)) && !this.closed && !link.closed) {
				try {
					this.monitor.wait(100);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			}
		}
		return !link.closed;
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// nothing left to do
		}
	}

	/** One proxied connection: a client socket, a server socket, two pumping threads. */
	private final class Link {

		private final Socket downstream;

		private final Socket upstream;

		private volatile boolean closed;

		Link(Socket downstream, Socket upstream) {
			this.downstream = downstream;
			this.upstream = upstream;
		}

		void start() {
			String name = "tcp-proxy-" + this.downstream.getPort();
			Thread up = new Thread(() -> pump(this.downstream, this.upstream, false), name + "-up");
			Thread down = new Thread(() -> pump(this.upstream, this.downstream, true), name + "-down");
			up.setDaemon(true);
			down.setDaemon(true);
			up.start();
			down.start();
		}

		private void pump(Socket from, Socket to, boolean toClient) {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream()) {
				OutputStream out = to.getOutputStream();
				while (true) {
					int read = in.read(buffer);
					// Neither bytes nor an end of stream cross a frozen link.
					if (!awaitFlowing(this, toClient)) {
						return;
					}
					if (read < 0) {
						return;
					}
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (SocketException ex) {
				// closed by the other pump, by drop() or by a peer
			}
			catch (IOException ex) {
				// same: the link is over
			}
			finally {
				if (!toClient) {
					// A client's request that found the server's side closed: the client hears of the
					// close with the server's held answers, not before.
					awaitFlowing(this, true);
				}
				close();
			}
		}

		void close() {
			this.closed = true;
			TcpProxy.this.links.remove(this);
			closeQuietly(this.downstream);
			closeQuietly(this.upstream);
		}

	}

}
