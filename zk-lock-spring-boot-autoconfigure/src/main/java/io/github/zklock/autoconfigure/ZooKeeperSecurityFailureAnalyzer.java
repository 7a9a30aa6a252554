package io.github.zklock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link ZooKeeperSecurityException}: which of the client's TLS, authentication or
 * permission settings does not match the servers', and which property to change.
 */
class ZooKeeperSecurityFailureAnalyzer extends AbstractFailureAnalyzer<ZooKeeperSecurityException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, ZooKeeperSecurityException cause) {
		String description = "zk-lock could not use ZooKeeper at '" + cause.getConnectString() + "': "
				+ cause.getMessage();
		return new FailureAnalysis(description, action(cause.getReason()), cause);
	}

	private static String action(ZooKeeperSecurityException.Reason reason) {
		return switch (reason) {
			case TLS_REQUIRED -> "The port in zk.lock.connect-string is a TLS port (ZooKeeper's secureClientPort). "
					+ "Connect with TLS: set zk.lock.ssl.bundle to a Spring Boot SSL bundle (spring.ssl.bundle.jks.<name> "
					+ "or spring.ssl.bundle.pem.<name>) whose trust store holds the servers' CA, or zk.lock.ssl.enabled=true "
					+ "to trust the JVM's default CAs. Or name the servers' plain clientPort instead.";
			case TLS_NOT_SPOKEN -> "zk.lock.ssl is on, but the port in zk.lock.connect-string does not speak TLS (it is "
					+ "probably the plain clientPort). Name the servers' secureClientPort, or turn TLS off "
					+ "(zk.lock.ssl.enabled=false).";
			case SERVER_CERTIFICATE_REJECTED -> "Make the bundle of zk.lock.ssl.bundle trust the CA that issued the "
					+ "servers' certificates (its truststore, or pem truststore.certificate), and check that those "
					+ "certificates are valid now and name the host of zk.lock.connect-string (DNS or IP subject "
					+ "alternative name): host name verification is on.";
			case TLS_PARAMETERS_REJECTED -> "Offer a TLS version and cipher suite the servers accept: the bundle's "
					+ "options (spring.ssl.bundle.<type>.<name>.options.enabled-protocols and ciphers; zk-lock offers "
					+ "TLSv1.3 and TLSv1.2 when the bundle names none), or the servers' ssl.protocol, "
					+ "ssl.enabledProtocols and ssl.ciphersuites (a ZooKeeper 3.8 server speaks TLSv1.2 by default).";
			case CLIENT_CERTIFICATE_REJECTED -> "The server requires a client certificate it trusts "
					+ "(ssl.clientAuth=need): give the bundle of zk.lock.ssl.bundle a key store (keystore, or pem "
					+ "keystore.certificate and private-key) with a valid certificate issued by a CA in the server's "
					+ "ssl.trustStore.";
			case AUTHENTICATION_FAILED -> "Check zk.lock.sasl.username and zk.lock.sasl.password (DIGEST-MD5), or "
					+ "the JAAS section of zk.lock.sasl.login-context, against the server's JAAS Server section.";
			case ACCESS_DENIED -> "The lock root path (zk.lock.root-path) belongs to another identity. Use the "
					+ "credentials, client certificate or SASL login of the applications that created it, or another "
					+ "zk.lock.root-path; an administrator can change its ACL (setAcl).";
			case NO_IDENTITY -> "Lock znodes are created with a creator-only ACL because the session is to have an "
					+ "identity (a client certificate in the SSL bundle, or zk.lock.sasl). Make the server authenticate "
					+ "it (for certificates: ssl.clientAuth=want or need, and the x509 authentication provider), or "
					+ "authenticate with zk.lock.auth.credentials instead.";
		};
	}

}
