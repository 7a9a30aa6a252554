package io.github.zklock.test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The proxy forwards, holds bytes while frozen and delivers them on heal, and closes and
 * refuses connections while dropped. Against a small echo server.
 */
@Timeout(30)
class TcpProxyTests {

	private ServerSocket echo;

	private TcpProxy proxy;

	@BeforeEach
	void start() throws IOException {
		this.echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread server = new Thread(() -> {
			while (!this.echo.isClosed()) {
				try {
					Socket socket = this.echo.accept();
					Thread echoing = new Thread(() -> {
						try (socket) {
							socket.getInputStream().transferTo(socket.getOutputStream());
						}
						catch (IOException ex) {
							// the client went away
						}
					});
					echoing.setDaemon(true);
					echoing.start();
				}
				catch (IOException ex) {
					return;
				}
			}
		}, "echo-server");
		server.setDaemon(true);
		server.start();
		this.proxy = TcpProxy.start(this.echo.getLocalPort());
	}

	@AfterEach
	void stop() throws IOException {
		this.proxy.close();
		this.echo.close();
	}

	@Test
	void forwardsBothWays() throws IOException {
		try (Socket socket = connect()) {
			socket.getOutputStream().write('a');
			assertThat(socket.getInputStream().read()).isEqualTo('a');
		}
	}

	@Test
	void holdsBytesWhileFrozenAndDeliversThemOnHeal() throws IOException {
		try (Socket socket = connect()) {
			this.proxy.freeze();
			socket.getOutputStream().write('b');
			socket.setSoTimeout(500);
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> socket.getInputStream().read());
			this.proxy.heal();
			socket.setSoTimeout(5000);
			assertThat(socket.getInputStream().read()).isEqualTo('b');
		}
	}

	@Test
	void closesConnectionsAndRefusesNewOnesWhileDropped() throws IOException {
		try (Socket socket = connect()) {
			this.proxy.drop(Duration.ofSeconds(20));
			assertThat(readOrEndOfStream(socket)).isEqualTo(-1);
		}
		try (Socket refused = connect()) {
			assertThat(readOrEndOfStream(refused)).isEqualTo(-1);
		}
		this.proxy.heal();
		forwardsBothWays();
	}

	@Test
	void triesARefusingServerAgainWhilePatienceLasts() throws Exception {
		int port;
		try (ServerSocket reserved = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			port = reserved.getLocalPort();
		}
		try (TcpProxy patient = TcpProxy.start(port, Duration.ofSeconds(10));
				Socket socket = connect(patient)) {
			// Accepted while nothing listens: the proxy keeps trying until the server binds.
			socket.getOutputStream().write('c');
			Thread.sleep(300);
			try (ServerSocket late = new ServerSocket(port, 50, InetAddress.getLoopbackAddress())) {
				try (Socket accepted = late.accept()) {
					accepted.setSoTimeout(5000);
					assertThat(accepted.getInputStream().read()).isEqualTo('c');
				}
			}
		}
	}

	@Test
	void closesTheClientsConnectionWhenTheServerRefusesWithoutPatience() throws IOException {
		int port;
		try (ServerSocket reserved = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
			port = reserved.getLocalPort();
		}
		try (TcpProxy impatient = TcpProxy.start(port); Socket socket = connect(impatient)) {
			assertThat(readOrEndOfStream(socket)).isEqualTo(-1);
		}
	}

	private Socket connect() throws IOException {
		return connect(this.proxy);
	}

	private static Socket connect(TcpProxy proxy) throws IOException {
		String[] hostPort = proxy.connectString().split(":");
		Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]));
		socket.setSoTimeout(5000);
		return socket;
	}

	/** Read one byte; a reset connection counts as its end. */
	private static int readOrEndOfStream(Socket socket) throws IOException {
		InputStream in = socket.getInputStream();
		try {
			return in.read();
		}
		catch (java.net.SocketException ex) {
			return -1;
		}
	}

}
