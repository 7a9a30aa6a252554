package io.github.zklock.autoconfigure;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.Collections;

import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleKey;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.util.StringUtils;

/**
 * The key and trust material of one Spring Boot {@link SslBundle}, written as PKCS12 files for one
 * ZooKeeper client, and the settings of that client's own {@link ZKClientConfig} that point at them.
 *
 * <p>Why files: the ZooKeeper client (3.9, {@code ClientX509Util.createNettySslContextForClient})
 * builds its TLS context from key and trust store <em>locations</em> in its configuration; it
 * takes no {@code SSLContext} or key manager object. Spring Boot's bundle may come from the class
 * path or from PEM text, so its stores are copied here into a directory of their own that only
 * this process's user can read, with a random password that lives only in the client's
 * configuration. Nothing is set JVM-wide: another client in the same JVM may use other material,
 * or none. The client reads the files at each new connection, so {@link #rewrite} (on a bundle
 * update) takes effect at the next reconnection. {@link #close()} deletes them.
 *
 * <p>A bundle without a trust store (for example {@link SslBundle#systemDefault()}) is given the
 * JVM's default trust anchors, so that the client always verifies the servers' certificates and
 * host names ({@code zookeeper.ssl.hostnameVerification}, on) with a trust store of its own,
 * whatever {@code zookeeper.ssl.*} system properties the JVM has.
 *
 * <p>Thread rules: {@link #rewrite} and {@link #close()} may be called from any thread; they are
 * serialized.
 */
final class ZooKeeperTlsFiles implements Closeable {

	private static final String TYPE = "PKCS12";

	private static final String[] DEFAULT_PROTOCOLS = { "TLSv1.3", "TLSv1.2" };

	private final Path directory;

	private final String password;

	private final @Nullable Path keyStore;

	private final Path trustStore;

	private final SslOptions options;

	private ZooKeeperTlsFiles(Path directory, String password, @Nullable Path keyStore, Path trustStore,
			SslOptions options) {
		this.directory = directory;
		this.password = password;
		this.keyStore = keyStore;
		this.trustStore = trustStore;
		this.options = options;
	}

	/**
	 * Write the bundle's stores into a new directory.
	 * @param bundle the bundle
	 * @param bundleName its name, for messages ({@code null} for the JVM's default material)
	 * @return the files
	 * @throws IllegalStateException if the bundle's key store has no private key (under its alias,
	 * if it names one), or its stores cannot be read or written
	 */
	static ZooKeeperTlsFiles write(SslBundle bundle, @Nullable String bundleName) {
		try {
			Path directory = createPrivateDirectory();
			String password = randomPassword();
			boolean hasKeyStore = bundle.getStores().getKeyStore() != null;
			ZooKeeperTlsFiles files = new ZooKeeperTlsFiles(directory, password,
					hasKeyStore ? directory.resolve("keystore.p12") : null, directory.resolve("truststore.p12"),
					bundle.getOptions());
			files.store(bundle, bundleName);
			return files;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not write the TLS material of " + describe(bundleName)
					+ " for the ZooKeeper client", ex);
		}
	}

	/**
	 * Replace the files with the material of an updated bundle (same password and locations).
	 * @param bundle the updated bundle
	 * @param bundleName its name, for messages
	 * @throws IllegalStateException as {@link #write}, or if the update adds or removes the key
	 * store (that needs a restart)
	 */
	synchronized void rewrite(SslBundle bundle, @Nullable String bundleName) {
		if ((bundle.getStores().getKeyStore() != null) != (this.keyStore != null)) {
			throw new IllegalStateException("The update of " + describe(bundleName) + " adds or removes its key "
					+ "store; the ZooKeeper client keeps its TLS material until the application restarts");
		}
		try {
			store(bundle, bundleName);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not write the updated TLS material of " + describe(bundleName), ex);
		}
	}

	/**
	 * Turn TLS on in a client configuration, with these files: the secure client, the Netty
	 * socket, the stores, host name verification, the {@linkplain #enabledProtocols protocols},
	 * and the bundle's cipher suites when it names some.
	 * @param config the client's own configuration
	 */
	void applyTo(ZKClientConfig config) {
		config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
		config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET,
				org.apache.zookeeper.ClientCnxnSocketNetty.class.getName());
		try (ClientX509Util x509 = new ClientX509Util()) {
			config.setProperty(x509.getSslKeystoreLocationProperty(),
					(this.keyStore != null) ? this.keyStore.toString() : "");
			config.setProperty(x509.getSslKeystorePasswdProperty(), (this.keyStore != null) ? this.password : "");
			config.setProperty(x509.getSslKeystoreTypeProperty(), TYPE);
			config.setProperty(x509.getSslTruststoreLocationProperty(), this.trustStore.toString());
			config.setProperty(x509.getSslTruststorePasswdProperty(), this.password);
			config.setProperty(x509.getSslTruststoreTypeProperty(), TYPE);
			config.setProperty(x509.getSslHostnameVerificationEnabledProperty(), "true");
			config.setProperty(x509.getSslEnabledProtocolsProperty(), String.join(",", enabledProtocols(this.options)));
			String[] ciphers = this.options.getCiphers();
			if (ciphers != null && ciphers.length > 0) {
				config.setProperty(x509.getSslCipherSuitesProperty(), String.join(",", ciphers));
			}
		}
	}

	/**
	 * The TLS versions the client offers: the bundle's, or TLS 1.3 and 1.2. Not ZooKeeper's own
	 * default, which is its {@code zookeeper.ssl.protocol} alone: TLS 1.3 for the 3.9 client, which
	 * then cannot talk to a 3.8 server that keeps its default, TLS 1.2 (the handshake fails with
	 * the alert {@code protocol_version}).
	 * @param options the bundle's options
	 * @return the protocol names, most preferred first
	 */
	static String[] enabledProtocols(SslOptions options) {
		String[] protocols = options.getEnabledProtocols();
		return (protocols != null && protocols.length > 0) ? protocols : DEFAULT_PROTOCOLS.clone();
	}

	/**
	 * Return whether a client certificate is sent (the bundle has a key store).
	 * @return whether there is a key store
	 */
	boolean hasClientCertificate() {
		return this.keyStore != null;
	}

	/**
	 * Delete the files and their directory. Idempotent.
	 */
	@Override
	public synchronized void close() {
		try {
			if (this.keyStore != null) {
				Files.deleteIfExists(this.keyStore);
			}
			Files.deleteIfExists(this.trustStore);
			Files.deleteIfExists(this.directory);
		}
		catch (IOException ex) {
			// deleteOnExit (registered when written) is the backstop
		}
	}

	private void store(SslBundle bundle, @Nullable String bundleName) throws IOException {
		char[] secret = this.password.toCharArray();
		try {
			if (this.keyStore != null) {
				writeAtomically(keyStoreCopy(bundle, bundleName, secret), this.keyStore, secret);
			}
			writeAtomically(trustStoreCopy(bundle.getStores().getTrustStore()), this.trustStore, secret);
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("Could not read the stores of " + describe(bundleName) + ": "
					+ ex.getMessage(), ex);
		}
	}

	/**
	 * The private key entries (the one of the bundle's key alias, if it names one), each under
	 * the files' password, the password the ZooKeeper client opens both the store and the key with.
	 */
	private static KeyStore keyStoreCopy(SslBundle bundle, @Nullable String bundleName, char[] secret)
			throws GeneralSecurityException, IOException {
		KeyStore source = bundle.getStores().getKeyStore();
		SslBundleKey key = bundle.getKey();
		String keyPassword = (key.getPassword() != null) ? key.getPassword() : bundle.getStores().getKeyStorePassword();
		char[] sourceSecret = (keyPassword != null) ? keyPassword.toCharArray() : new char[0];
		KeyStore copy = KeyStore.getInstance(TYPE);
		copy.load(null, null);
		for (String alias : Collections.list(source.aliases())) {
			if (source.isKeyEntry(alias) && (key.getAlias() == null || key.getAlias().equals(alias))) {
				Key privateKey = source.getKey(alias, sourceSecret);
				Certificate[] chain = source.getCertificateChain(alias);
				if (privateKey != null && chain != null) {
					copy.setKeyEntry(alias, privateKey, secret, chain);
				}
			}
		}
		if (copy.size() == 0) {
			throw new IllegalStateException("The key store of " + describe(bundleName) + " has no private key with "
					+ "a certificate chain" + ((key.getAlias() != null) ? " under the alias '" + key.getAlias() + "'" : "")
					+ ": the ZooKeeper client would have no certificate to send");
		}
		return copy;
	}

	/**
	 * The trusted certificates of the bundle's trust store (and the certificates of its key entries,
	 * as a trust manager would take them), or the JVM's default trust anchors when it has none.
	 */
	private static KeyStore trustStoreCopy(@Nullable KeyStore source) throws GeneralSecurityException, IOException {
		KeyStore copy = KeyStore.getInstance(TYPE);
		copy.load(null, null);
		if (source != null) {
			for (String alias : Collections.list(source.aliases())) {
				Certificate certificate = source.getCertificate(alias);
				if (certificate != null) {
					copy.setCertificateEntry(alias, certificate);
				}
			}
			return copy;
		}
		TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
		factory.init((KeyStore) null);
		int index = 0;
		for (var manager : factory.getTrustManagers()) {
			if (manager instanceof X509TrustManager x509) {
				for (X509Certificate issuer : x509.getAcceptedIssuers()) {
					copy.setCertificateEntry("jvm-default-" + index++, issuer);
				}
			}
		}
		return copy;
	}

	private static void writeAtomically(KeyStore store, Path target, char[] secret)
			throws IOException, GeneralSecurityException {
		Path temporary = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
		try {
			try (OutputStream out = Files.newOutputStream(temporary)) {
				store.store(out, secret);
			}
			Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
			target.toFile().deleteOnExit();
		}
		finally {
			Files.deleteIfExists(temporary);
		}
	}

	/** Owner-only where the file system has POSIX permissions (temporary files are owner-only too). */
	private static Path createPrivateDirectory() throws IOException {
		Path directory = FileSystems.getDefault().supportedFileAttributeViews().contains("posix")
				? Files.createTempDirectory("zk-lock-tls-",
						PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))
				: Files.createTempDirectory("zk-lock-tls-");
		directory.toFile().deleteOnExit();
		return directory;
	}

	private static String randomPassword() {
		byte[] bytes = new byte[24];
		new SecureRandom().nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	static String describe(@Nullable String bundleName) {
		return StringUtils.hasText(bundleName) ? "SSL bundle '" + bundleName + "'" : "the JVM's default TLS material";
	}

}
