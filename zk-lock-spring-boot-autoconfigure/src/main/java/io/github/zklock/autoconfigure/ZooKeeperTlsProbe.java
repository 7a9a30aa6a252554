package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

import org.apache.zookeeper.client.ConnectStringParser;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;

import io.github.zklock.autoconfigure.ZooKeeperSecurityException.Reason;

/**
 * Tells why a client could not connect when TLS is the likely cause, with connections of its own
 * to each server of the connect string (nothing of ZooKeeper's protocol is sent):
 * <ol>
 * <li>Does the port speak TLS? A TLS client hello is sent on a plain connection: a TLS record in
 * answer says yes, a closed connection says no (a plain ZooKeeper port reads the hello as a
 * request of an impossible length). A client without TLS at a port that speaks it:
 * {@link Reason#TLS_REQUIRED}; a client with TLS at one that does not:
 * {@link Reason#TLS_NOT_SPOKEN}.</li>
 * <li>For a client with TLS, a handshake as the ZooKeeper client makes it: the bundle's material,
 * its protocols, host name verification. A server certificate it does not accept
 * ({@link Reason#SERVER_CERTIFICATE_REJECTED}: unknown issuer, expired, other host name), no
 * version or cipher suite in common (the alerts {@code protocol_version}, {@code handshake_failure}:
 * {@link Reason#TLS_PARAMETERS_REJECTED}), or the server ending the handshake otherwise, with an
 * alert ({@code bad_certificate}, {@code certificate_unknown}) or by closing the connection, during
 * the handshake (TLS 1.2) or right after it (TLS 1.3): {@link Reason#CLIENT_CERTIFICATE_REJECTED}.</li>
 * </ol>
 * A server that cannot be reached, does not answer in time, or with which TLS works, says nothing:
 * the next one is tried.
 *
 * <p>Used only after the client failed to connect, so that a healthy start sends nothing extra
 * (a plain server logs a TLS hello as a malformed request).
 */
final class ZooKeeperTlsProbe {

	/** The content types of a TLS record that starts a server's answer to a hello. */
	private static final int TLS_HANDSHAKE_RECORD = 22;

	private static final int TLS_ALERT_RECORD = 21;

	/** The TLS alerts that say there is no protocol version or cipher suite in common. */
	private static final List<String> PARAMETER_ALERTS = List.of("protocol_version", "handshake_failure",
			"insufficient_security");

	/** How long the server may take, after the handshake, to reject the client's certificate. */
	private static final Duration ALERT_WAIT = Duration.ofMillis(500);

	private ZooKeeperTlsProbe() {
	}

	/**
	 * Probe the servers of a connect string, one after the other, within a time budget.
	 * @param connectString the connect string
	 * @param bundle the client's TLS material, or {@code null} for a client without TLS
	 * @param bundleName the bundle's name, for messages
	 * @param budget how long the probes may take in all
	 * @return what does not match, or {@code null} if the probes found nothing
	 */
	static @Nullable ZooKeeperSecurityException diagnose(String connectString, @Nullable SslBundle bundle,
			@Nullable String bundleName, Duration budget) {
		long deadline = System.nanoTime() + budget.toNanos();
		List<InetSocketAddress> servers = new ConnectStringParser(connectString).getServerAddresses();
		for (InetSocketAddress server : servers) {
			long left = Duration.ofNanos(deadline - System.nanoTime()).toMillis();
			if (left < 50) {
				return null;
			}
			ZooKeeperSecurityException finding = probe(connectString, server, bundle, bundleName, (int) left);
			if (finding != null) {
				return finding;
			}
		}
		return null;
	}

	private static @Nullable ZooKeeperSecurityException probe(String connectString, InetSocketAddress server,
			@Nullable SslBundle bundle, @Nullable String bundleName, int timeoutMillis) {
		InetSocketAddress address = new InetSocketAddress(server.getHostString(), server.getPort());
		String where = "the server " + server.getHostString() + ":" + server.getPort();
		Boolean speaksTls = speaksTls(address, timeoutMillis);
		if (speaksTls == null) {
			return null;
		}
		if (bundle == null) {
			return speaksTls ? new ZooKeeperSecurityException(connectString, Reason.TLS_REQUIRED,
					where + " answers a TLS hello on this port", null) : null;
		}
		if (!speaksTls) {
			return new ZooKeeperSecurityException(connectString, Reason.TLS_NOT_SPOKEN,
					where + " does not answer a TLS hello: it closed the connection", null);
		}
		String material = ZooKeeperTlsFiles.describe(bundleName);
		Outcome outcome = handshake(address, bundle, timeoutMillis);
		return switch (outcome.kind) {
			case CERTIFICATE -> new ZooKeeperSecurityException(connectString, Reason.SERVER_CERTIFICATE_REJECTED,
					"the certificate of " + where + " is not accepted with the trust material of " + material + ": "
							+ message(rootCause(outcome.failure)),
					outcome.failure);
			case PARAMETERS -> new ZooKeeperSecurityException(connectString, Reason.TLS_PARAMETERS_REJECTED,
					where + " has no TLS version or cipher suite in common with the client ("
							+ String.join(", ", ZooKeeperTlsFiles.enabledProtocols(bundle.getOptions())) + "; "
							+ message(outcome.failure) + ")",
					outcome.failure);
			// A server that speaks TLS and ends this handshake, with an alert or by closing the
			// connection, refuses what the client sent: its certificate, or none.
			case ALERT, CLOSED -> new ZooKeeperSecurityException(connectString, Reason.CLIENT_CERTIFICATE_REJECTED,
					where + " ended the handshake with " + material + " (" + message(outcome.failure) + ")",
					outcome.failure);
			default -> null;
		};
	}

	/**
	 * Send a TLS client hello on a plain connection and look at the first byte of the answer: a TLS
	 * record (handshake or alert) says the port speaks TLS; a closed connection says it does not (a
	 * plain ZooKeeper port reads the hello as a request of an impossible length and closes).
	 * @return whether it speaks TLS, or {@code null} if the server cannot be reached or does not
	 * answer in time
	 */
	private static @Nullable Boolean speaksTls(InetSocketAddress address, int timeoutMillis) {
		try (Socket socket = new Socket()) {
			socket.connect(address, timeoutMillis);
			socket.setSoTimeout(timeoutMillis);
			socket.getOutputStream().write(clientHello(address));
			socket.getOutputStream().flush();
			int first = socket.getInputStream().read();
			return first == TLS_HANDSHAKE_RECORD || first == TLS_ALERT_RECORD;
		}
		catch (SocketTimeoutException ex) {
			return null;
		}
		catch (IOException ex) {
			// refused or unreachable: nothing to say; reset after the hello: not TLS
			return (ex instanceof java.net.ConnectException || ex instanceof java.net.NoRouteToHostException
					|| ex instanceof java.net.UnknownHostException) ? null : Boolean.FALSE;
		}
	}

	/** The first flight of a client handshake, from the JDK's engine: a TLS record with a ClientHello. */
	private static byte[] clientHello(InetSocketAddress address) throws SSLException {
		SSLEngine engine = acceptingEverything().createSSLEngine(address.getHostString(), address.getPort());
		engine.setUseClientMode(true);
		ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
		engine.wrap(ByteBuffer.allocate(0), out);
		out.flip();
		byte[] hello = new byte[out.remaining()];
		out.get(hello);
		return hello;
	}

	/** The ZooKeeper client's handshake, with the bundle's material, host name and protocols. */
	private static Outcome handshake(InetSocketAddress address, SslBundle bundle, int timeoutMillis) {
		try (Socket socket = new Socket()) {
			socket.connect(address, timeoutMillis);
			socket.setSoTimeout(timeoutMillis);
			try (SSLSocket tls = (SSLSocket) bundle.createSslContext()
				.getSocketFactory()
				.createSocket(socket, address.getHostString(), address.getPort(), false)) {
				SSLParameters parameters = tls.getSSLParameters();
				parameters.setEndpointIdentificationAlgorithm("HTTPS");
				parameters.setProtocols(ZooKeeperTlsFiles.enabledProtocols(bundle.getOptions()));
				String[] ciphers = bundle.getOptions().getCiphers();
				if (ciphers != null && ciphers.length > 0) {
					parameters.setCipherSuites(ciphers);
				}
				tls.setSSLParameters(parameters);
				tls.startHandshake();
				// TLS 1.3: the client's side of the handshake is done before the server has checked
				// the client's certificate; a refusal comes as an alert on the first read.
				tls.setSoTimeout((int) Math.min(timeoutMillis, ALERT_WAIT.toMillis()));
				try {
					tls.getInputStream().read();
				}
				catch (SocketTimeoutException ex) {
					// silence: the server waits for the client's first request, as it should
				}
				return new Outcome(Kind.COMPLETED, null);
			}
		}
		catch (SSLException ex) {
			if (hasCause(ex, CertificateException.class)) {
				return new Outcome(Kind.CERTIFICATE, ex);
			}
			String message = String.valueOf(ex.getMessage());
			if (PARAMETER_ALERTS.stream().anyMatch(message::contains)) {
				return new Outcome(Kind.PARAMETERS, ex);
			}
			return new Outcome(message.contains("alert") ? Kind.ALERT : Kind.CLOSED, ex);
		}
		catch (SocketTimeoutException ex) {
			return new Outcome(Kind.UNANSWERED, ex);
		}
		catch (IOException ex) {
			// a broken pipe or a reset mid-handshake: the server closed the connection on it
			return new Outcome(Kind.CLOSED, ex);
		}
	}

	private static boolean hasCause(Throwable ex, Class<? extends Throwable> type) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return true;
			}
		}
		return false;
	}

	private static Throwable rootCause(@Nullable Throwable ex) {
		Throwable cause = ex;
		while (cause != null && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return (cause != null) ? cause : new IllegalStateException("no cause");
	}

	private static String message(@Nullable Throwable ex) {
		return (ex != null) ? ex.getClass().getSimpleName() + ": " + ex.getMessage() : "no answer";
	}

	/** Only to learn whether a port speaks TLS: no data is sent over the session. */
	private static SSLContext acceptingEverything() {
		try {
			SSLContext context = SSLContext.getInstance("TLS");
			context.init(null, new TrustManager[] { new X509TrustManager() {

				@Override
				public void checkClientTrusted(X509Certificate[] chain, String authType) {
				}

				@Override
				public void checkServerTrusted(X509Certificate[] chain, String authType) {
				}

				@Override
				public X509Certificate[] getAcceptedIssuers() {
					return new X509Certificate[0];
				}

			} }, null);
			return context;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("No TLS in this JVM", ex);
		}
	}

	private enum Kind {

		COMPLETED, ALERT, PARAMETERS, CERTIFICATE, CLOSED, UNANSWERED

	}

	private record Outcome(Kind kind, @Nullable Exception failure) {
	}

}
