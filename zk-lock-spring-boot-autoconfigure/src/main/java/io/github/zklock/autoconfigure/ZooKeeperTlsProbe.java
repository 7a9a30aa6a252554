package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;

import javax.net.ssl.SSLContext;
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
 * Tells why a client could not connect when TLS is the likely cause, by a TLS handshake of its
 * own with each server of the connect string (nothing of ZooKeeper's protocol is sent):
 * <ul>
 * <li>a client without TLS: if a server completes a handshake (or answers one with a TLS alert), its
 * port speaks TLS: {@link Reason#TLS_REQUIRED};</li>
 * <li>a client with TLS, with the bundle's material and host name verification, as the ZooKeeper
 * client does: no TLS answer at all ({@link Reason#TLS_NOT_SPOKEN}), a certificate the client does
 * not accept ({@link Reason#SERVER_CERTIFICATE_REJECTED}: unknown issuer, expired, other host
 * name), or a TLS alert from the server about the client's certificate, during the handshake
 * (TLS 1.2) or right after it (TLS 1.3) ({@link Reason#CLIENT_CERTIFICATE_REJECTED}).</li>
 * </ul>
 * A server that cannot be reached, or with which TLS works, says nothing: the next one is tried.
 *
 * <p>Used only after the client failed to connect, so that a healthy start sends nothing extra
 * (a plain server logs a TLS hello as a malformed request).
 */
final class ZooKeeperTlsProbe {

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
		String where = "the server " + server.getHostString() + ":" + server.getPort();
		SSLContext context = (bundle != null) ? bundle.createSslContext() : acceptingEverything();
		Outcome outcome = handshake(server, context, bundle != null, timeoutMillis);
		if (bundle == null) {
			if (outcome.kind == Kind.COMPLETED || outcome.kind == Kind.ALERT) {
				return new ZooKeeperSecurityException(connectString, Reason.TLS_REQUIRED,
						where + " answers a TLS handshake on this port", outcome.failure);
			}
			return null;
		}
		String material = ZooKeeperTlsFiles.describe(bundleName);
		return switch (outcome.kind) {
			case NOT_TLS -> new ZooKeeperSecurityException(connectString, Reason.TLS_NOT_SPOKEN,
					where + " does not answer a TLS handshake (" + message(outcome.failure) + ")", outcome.failure);
			case CERTIFICATE -> new ZooKeeperSecurityException(connectString, Reason.SERVER_CERTIFICATE_REJECTED,
					"the certificate of " + where + " is not accepted with the trust material of " + material + ": "
							+ message(rootCause(outcome.failure)),
					outcome.failure);
			case ALERT -> new ZooKeeperSecurityException(connectString, Reason.CLIENT_CERTIFICATE_REJECTED,
					where + " ended the handshake with " + material + " (" + message(outcome.failure) + ")",
					outcome.failure);
			default -> null;
		};
	}

	private static Outcome handshake(InetSocketAddress server, SSLContext context, boolean verifyHostName,
			int timeoutMillis) {
		boolean connected = false;
		try (Socket socket = new Socket()) {
			socket.connect(server, timeoutMillis);
			connected = true;
			socket.setSoTimeout(timeoutMillis);
			try (SSLSocket tls = (SSLSocket) context.getSocketFactory()
				.createSocket(socket, server.getHostString(), server.getPort(), false)) {
				if (verifyHostName) {
					SSLParameters parameters = tls.getSSLParameters();
					parameters.setEndpointIdentificationAlgorithm("HTTPS");
					tls.setSSLParameters(parameters);
				}
				tls.startHandshake();
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
			return new Outcome(message.contains("alert") ? Kind.ALERT : Kind.NOT_TLS, ex);
		}
		catch (IOException ex) {
			// Once connected, a closed or reset connection, or no answer, is not TLS: a plain
			// ZooKeeper port closes the connection on a TLS hello, a length it cannot take.
			return new Outcome(connected ? Kind.NOT_TLS : Kind.UNREACHABLE, ex);
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

		COMPLETED, ALERT, CERTIFICATE, NOT_TLS, UNREACHABLE

	}

	private record Outcome(Kind kind, @Nullable Exception failure) {
	}

}
